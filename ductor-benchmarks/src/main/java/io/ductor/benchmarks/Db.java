package io.ductor.benchmarks;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.Properties;

import io.ductor.test.TestDatabase;

/**
 * JDBC coordinates of one benchmark database.
 *
 * @param url its JDBC URL
 * @param user the role
 * @param password the password, or {@code null}
 */
record Db(String url, String user, String password) {

	static Db of(TestDatabase database) {
		return new Db(database.jdbcUrl(), database.username(), database.password());
	}

	Connection connect() throws SQLException {
		Properties properties = new Properties();
		properties.setProperty("user", this.user);
		if (this.password != null) {
			properties.setProperty("password", this.password);
		}
		properties.setProperty("ApplicationName", "ductor-benchmarks");
		return DriverManager.getConnection(this.url, properties);
	}

	/** The Spring properties of a context on this database. */
	String[] datasourceProperties(int poolSize) {
		return new String[] { "spring.datasource.url=" + this.url, "spring.datasource.username=" + this.user,
				"spring.datasource.password=" + ((this.password != null) ? this.password : ""),
				"spring.datasource.hikari.maximum-pool-size=" + poolSize,
				"spring.datasource.hikari.minimum-idle=" + poolSize };
	}

}
