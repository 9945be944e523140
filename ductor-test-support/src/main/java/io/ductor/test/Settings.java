package io.ductor.test;

/**
 * Reads {@code DUCTOR_TEST_*} settings: a Java system property wins over the environment
 * variable of the same name.
 */
final class Settings {

	static final String JDBC_URL = "DUCTOR_TEST_JDBC_URL";
	static final String JDBC_USER = "DUCTOR_TEST_JDBC_USER";
	static final String JDBC_PASSWORD = "DUCTOR_TEST_JDBC_PASSWORD";
	static final String DOCKER = "DUCTOR_TEST_DOCKER";

	private Settings() {
	}

	/** Returns the value, or {@code null} when unset or blank. */
	static String get(String name) {
		String value = System.getProperty(name);
		if (value == null || value.isBlank()) {
			value = System.getenv(name);
		}
		return value == null || value.isBlank() ? null : value;
	}

}
