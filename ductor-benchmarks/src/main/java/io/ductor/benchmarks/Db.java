package io.ductor.benchmarks;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;

import io.ductor.test.TestDatabase;

/**
 * JDBC coordinates of one benchmark database.
 *
 * @param url its JDBC URL
 * @param user the role
 * @param password the password, or {@code null}
 * @param driverClassName the JDBC driver to use instead of the one the URL names, or
 * {@code null}
 */
record Db(String url, String user, String password, String driverClassName) {

	static Db of(TestDatabase database) {
		return new Db(database.jdbcUrl(), database.username(), database.password(), null);
	}

	/**
	 * @return the same database through {@link CountingDriver}, which counts what
	 * producer threads send
	 */
	Db counting() {
		return new Db(CountingDriver.PREFIX + this.url.substring("jdbc:".length()), this.user, this.password,
				CountingDriver.class.getName());
	}

	Connection connect() throws SQLException {
		Properties properties = new Properties();
		properties.setProperty("user", this.user);
		if (this.password != null) {
			properties.setProperty("password", this.password);
		}
		properties.setProperty("ApplicationName", "ductor-benchmarks");
		return DriverManager.getConnection(this.url.replace(CountingDriver.PREFIX, "jdbc:"), properties);
	}

	/** A pool of {@code size} connections to this database, all opened at once. */
	HikariDataSource pool(int size) {
		HikariConfig config = new HikariConfig();
		config.setJdbcUrl(this.url);
		config.setUsername(this.user);
		config.setPassword(this.password);
		config.setMaximumPoolSize(size);
		config.setMinimumIdle(size);
		config.setPoolName("bench-" + size);
		if (this.driverClassName != null) {
			config.setDriverClassName(this.driverClassName);
		}
		return new HikariDataSource(config);
	}

	/** The Spring properties of a context on this database. */
	String[] datasourceProperties(int poolSize) {
		List<String> properties = new ArrayList<>(
				List.of("spring.datasource.url=" + this.url, "spring.datasource.username=" + this.user,
						"spring.datasource.password=" + ((this.password != null) ? this.password : ""),
						"spring.datasource.hikari.maximum-pool-size=" + poolSize,
						"spring.datasource.hikari.minimum-idle=" + poolSize));
		if (this.driverClassName != null) {
			properties.add("spring.datasource.driver-class-name=" + this.driverClassName);
		}
		return properties.toArray(String[]::new);
	}

}
