package io.ductor.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;

import org.springframework.boot.SpringApplication;

/**
 * The JVM's embedded PostgreSQL, started on first use and stopped when the JVM ends,
 * after the application contexts of the tests that use it.
 */
final class EmbeddedServer {

	private static final AtomicInteger databases = new AtomicInteger();

	private static EmbeddedPostgres server;

	private EmbeddedServer() {
	}

	/**
	 * @return the {@code spring.datasource.*} properties of a new, empty database
	 */
	static synchronized Map<String, Object> newDatabase() {
		EmbeddedPostgres postgres = server();
		String name = "ductor_test_" + ProcessHandle.current().pid() + "_" + databases.incrementAndGet();
		try (Connection connection = postgres.getPostgresDatabase().getConnection();
				Statement statement = connection.createStatement()) {
			statement.execute("CREATE DATABASE " + name);
		}
		catch (SQLException ex) {
			throw new IllegalStateException("Could not create database " + name + " on the embedded PostgreSQL", ex);
		}
		return Map.of("spring.datasource.url", postgres.getJdbcUrl("postgres", name), "spring.datasource.username",
				"postgres", "spring.datasource.password", "");
	}

	private static EmbeddedPostgres server() {
		if (server == null) {
			try {
				// no JVM shutdown hook of its own: one runs beside the hook that closes
				// the
				// test contexts, and would stop the server while Ductor's workers and the
				// pool still use it
				EmbeddedPostgres started = EmbeddedPostgres.builder().setRegisterShutdownHook(false).start();
				SpringApplication.getShutdownHandlers().add(() -> stop(started));
				server = started;
			}
			catch (IOException ex) {
				throw new UncheckedIOException("Could not start an embedded PostgreSQL", ex);
			}
		}
		return server;
	}

	/**
	 * Stops the server once the JVM ends, from Spring Boot's shutdown hook, which runs
	 * its handlers after it closed the application contexts registered with it (the test
	 * contexts Spring Boot loaded, cached until the JVM ends).
	 */
	private static void stop(EmbeddedPostgres started) {
		try {
			started.close();
		}
		catch (IOException ex) {
			// the JVM ends; the server's directory is temporary
		}
	}

}
