package io.ductor.observation.internal;

import org.slf4j.MDC;

import org.springframework.util.ClassUtils;

/**
 * The MDC fields Ductor sets while it runs an attempt or a tick, so that every log line
 * of the work (the application's included) names the intent, effect, key, run and
 * attempt; the previous values come back when the work ends, so nothing leaks onto a
 * pooled thread. Payloads are never put in the MDC. Without SLF4J nothing is set.
 */
public final class DuctorMdc {

	/** The intent id. */
	public static final String INTENT = "ductor.intent";

	/** The effect name. */
	public static final String EFFECT = "ductor.effect";

	/** The intent's idempotency key. */
	public static final String KEY = "ductor.key";

	/** The run id. */
	public static final String RUN = "ductor.run";

	/** The attempt number. */
	public static final String ATTEMPT = "ductor.attempt";

	private static final boolean PRESENT = ClassUtils.isPresent("org.slf4j.MDC", DuctorMdc.class.getClassLoader());

	private DuctorMdc() {
	}

	/**
	 * Set the fields of one dispatch attempt.
	 * @return what puts back the previous values
	 */
	public static Restore attempt(long intentId, String effect, String key, String runId, int attempt) {
		if (!PRESENT) {
			return Restore.NONE;
		}
		return Slf4j.put(new String[] { INTENT, EFFECT, KEY, RUN, ATTEMPT },
				new String[] { Long.toString(intentId), effect, key, runId, Integer.toString(attempt) });
	}

	/**
	 * Set the fields of one tick.
	 * @return what puts back the previous values
	 */
	public static Restore tick(String runId) {
		if (!PRESENT) {
			return Restore.NONE;
		}
		return Slf4j.put(new String[] { RUN }, new String[] { runId });
	}

	/** Puts back the values the MDC had before. */
	public interface Restore extends AutoCloseable {

		/** Restores nothing. */
		Restore NONE = () -> {
		};

		@Override
		void close();

	}

	/** Touches SLF4J only when it is present. */
	private static final class Slf4j {

		static Restore put(String[] keys, String[] values) {
			String[] previous = new String[keys.length];
			for (int i = 0; i < keys.length; i++) {
				previous[i] = MDC.get(keys[i]);
				set(keys[i], values[i]);
			}
			return () -> {
				for (int i = 0; i < keys.length; i++) {
					set(keys[i], previous[i]);
				}
			};
		}

		private static void set(String key, String value) {
			if (value != null) {
				MDC.put(key, value);
			}
			else {
				MDC.remove(key);
			}
		}

	}

}
