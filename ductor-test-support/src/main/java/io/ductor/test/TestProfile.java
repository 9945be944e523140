package io.ductor.test;

/**
 * The size of the long tests (crash, soak and scale tests): {@code short}, the default
 * that {@code ./mvnw verify} and CI run, or {@code chaos}, the long version that
 * {@code -Pchaos} runs, from the system property {@value #PROPERTY}. Both sizes check the
 * same promise; the long one kills more often and moves more data.
 */
public final class TestProfile {

	/**
	 * The system property naming the profile; the build sets it from the {@code chaos}
	 * Maven profile.
	 */
	public static final String PROPERTY = "ductor.test.profile";

	private TestProfile() {
	}

	/** Returns whether the long version runs ({@code -Pchaos}). */
	public static boolean chaos() {
		return "chaos".equalsIgnoreCase(System.getProperty(PROPERTY, "short").trim());
	}

	/** Returns {@code shortSize}, or {@code chaosSize} under {@code -Pchaos}. */
	public static int size(int shortSize, int chaosSize) {
		return chaos() ? chaosSize : shortSize;
	}

}
