package io.ductor.test;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.concurrent.atomic.AtomicInteger;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;

/**
 * Coordinates of one isolated test database, usually made by
 * {@link TestDatabases#create()}.
 *
 * <p>
 * On a server where the test role may not create databases, the isolation unit is a
 * schema instead: then {@link #jdbcUrl()} carries {@code currentSchema=<name>} and
 * {@link #name()} is the schema's name.
 *
 * @param jdbcUrl JDBC URL of the database (or of the shared database, with
 * {@code currentSchema})
 * @param username role to connect as
 * @param password password, or {@code null} when none is configured (trust auth,
 * {@code .pgpass}, in the URL)
 * @param name the database (or schema) name, {@code ductor_test_<epochSeconds>_<random>}
 */
public record TestDatabase(String jdbcUrl, String username, String password, String name) {

	private static final AtomicInteger POOLS = new AtomicInteger();

	/**
	 * Opens a new Hikari pool on this database; the caller closes it. Its pool name,
	 * which is also the connections' {@code application_name} (so that
	 * {@link TestDatabases#terminateConnections} can target it), is
	 * {@code <name>-pool-<n>}. Connections are opened on demand ({@code minimumIdle} 0)
	 * to spare the server.
	 */
	public HikariDataSource newDataSource(int maxPoolSize) {
		String poolName = name + "-pool-" + POOLS.incrementAndGet();
		HikariConfig config = new HikariConfig();
		config.setPoolName(poolName);
		config.setJdbcUrl(jdbcUrl);
		config.setUsername(username);
		config.setPassword(password);
		config.setMaximumPoolSize(maxPoolSize);
		config.setMinimumIdle(0);
		config.addDataSourceProperty("ApplicationName", poolName);
		return new HikariDataSource(config);
	}

	/**
	 * Returns the Spring Boot properties that point an application at this database,
	 * {@code spring.datasource.url}, {@code .username} and {@code .password} (empty when
	 * none), as {@code key=value} strings for {@code withPropertyValues},
	 * {@code SpringApplicationBuilder.properties} or, with {@code --} in front, a command
	 * line.
	 */
	public String[] springProperties() {
		return new String[] { "spring.datasource.url=" + jdbcUrl, "spring.datasource.username=" + username,
				"spring.datasource.password=" + (password != null ? password : "") };
	}

	/**
	 * Opens a plain, unpooled connection (its {@code application_name} is
	 * {@link #name()}); the caller closes it.
	 */
	public Connection connect() throws SQLException {
		return PostgresServer.connect(jdbcUrl, username, password, name);
	}

	/** Returns the server's major version, e.g. 15, 17 or 18. */
	public int serverMajorVersion() {
		try (Connection connection = connect()) {
			return connection.getMetaData().getDatabaseMajorVersion();
		}
		catch (SQLException e) {
			throw new IllegalStateException("Cannot connect to test database " + name + ": " + e.getMessage(), e);
		}
	}
}
