package io.ductor.test;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.Properties;

/**
 * The one PostgreSQL server this JVM's tests run against.
 *
 * @param description human-readable origin and version, for logs
 * @param adminUrl JDBC URL of a database on the server that test databases are created
 * from
 * @param username role used for everything, never {@code null}
 * @param password password, or {@code null} when none is configured
 * @param majorVersion server major version, e.g. 17
 * @param shared whether other people or earlier runs use the server too (an explicit
 * URL): only then are leftovers cleaned up and the schema fallback allowed
 */
record PostgresServer(String description, String adminUrl, String username, String password, int majorVersion,
		boolean shared) {

	Connection connect() throws SQLException {
		return connect(adminUrl, username, password, "ductor-test-admin");
	}

	static Connection connect(String url, String username, String password, String applicationName)
			throws SQLException {
		Properties properties = new Properties();
		if (username != null) {
			properties.setProperty("user", username);
		}
		if (password != null) {
			properties.setProperty("password", password);
		}
		properties.setProperty("ApplicationName", applicationName);
		return DriverManager.getConnection(url, properties);
	}
}
