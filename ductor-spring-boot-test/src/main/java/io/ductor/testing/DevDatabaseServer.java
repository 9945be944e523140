package io.ductor.testing;

import java.io.Closeable;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.boot.jdbc.autoconfigure.JdbcConnectionDetails;

/**
 * The embedded PostgreSQL of {@link DuctorDevDatabase}: its data in a directory kept
 * across restarts, stopped by the context (no JVM shutdown hook of its own, which would
 * race the context's stop of the workers that use it).
 */
final class DevDatabaseServer implements Closeable {

	private static final Log logger = LogFactory.getLog(DuctorDevDatabase.class);

	private final Closeable server;

	private final String jdbcUrl;

	private DevDatabaseServer(Closeable server, String jdbcUrl) {
		this.server = server;
		this.jdbcUrl = jdbcUrl;
	}

	static DevDatabaseServer start(Path directory, int port) {
		try {
			Files.createDirectories(directory);
			EmbeddedPostgres.Builder builder = EmbeddedPostgres.builder()
				.setDataDirectory(directory)
				.setCleanDataDirectory(false)
				.setRegisterShutdownHook(false);
			if (port > 0) {
				builder.setPort(port);
			}
			EmbeddedPostgres postgres = builder.start();
			String url = postgres.getJdbcUrl("postgres", "postgres");
			logger.info("Development database: " + url + " (user postgres, no password), data in " + directory);
			return new DevDatabaseServer(postgres, url);
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Could not start the development database in " + directory, ex);
		}
	}

	JdbcConnectionDetails connectionDetails() {
		String url = this.jdbcUrl;
		return new JdbcConnectionDetails() {

			@Override
			public String getUsername() {
				return "postgres";
			}

			@Override
			public String getPassword() {
				return "";
			}

			@Override
			public String getJdbcUrl() {
				return url;
			}

		};
	}

	@Override
	public void close() throws IOException {
		this.server.close();
	}

}
