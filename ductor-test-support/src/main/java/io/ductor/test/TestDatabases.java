package io.ductor.test;

import java.security.SecureRandom;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Fresh, isolated databases on the one PostgreSQL server of this test JVM.
 *
 * <p>
 * The server is chosen once per JVM, in this order: the JDBC URL in
 * {@code DUCTOR_TEST_JDBC_URL} (with {@code DUCTOR_TEST_JDBC_USER} and
 * {@code DUCTOR_TEST_JDBC_PASSWORD}; system properties of the same names win over
 * environment variables); else a Testcontainers {@code postgres:17-alpine} container when
 * a Docker engine answers ({@code DUCTOR_TEST_DOCKER=false} skips asking); else an
 * embedded PostgreSQL started lazily and stopped at JVM exit.
 *
 * <p>
 * Each {@link #create()} makes a new database
 * {@code ductor_test_<epochSeconds>_<random>}. If the role may not create databases on an
 * explicit server, a schema of that name in the given database is used instead.
 */
public final class TestDatabases {

	private static final Logger log = LoggerFactory.getLogger(TestDatabases.class);

	private static final String PREFIX = "ductor_test_";

	private static final Pattern NAME = Pattern.compile(PREFIX + "(\\d{1,12})_[a-z0-9]+");

	private static final Duration LEFTOVER_AGE = Duration.ofHours(6);

	private static final Duration TERMINATION_WAIT = Duration.ofSeconds(10);

	private static final SecureRandom RANDOM = new SecureRandom();

	private enum Kind {

		DATABASE, SCHEMA

	}

	private static final Map<String, Kind> created = new ConcurrentHashMap<>();

	private static volatile boolean schemasOnly;

	private static boolean leftoversCleaned;

	private TestDatabases() {
	}

	/**
	 * Creates a fresh, empty database (or schema, see the class comment) on this JVM's
	 * server.
	 */
	public static TestDatabase create() {
		PostgresServer server = PostgresServers.get();
		cleanLeftoversOnce(server);
		String name = PREFIX + Instant.now().getEpochSecond() + "_" + randomSuffix();
		try (Connection admin = server.connect(); Statement statement = admin.createStatement()) {
			if (!schemasOnly) {
				try {
					// template0 cannot be connected to, so "source database is being
					// accessed" cannot happen.
					statement.execute("CREATE DATABASE " + name + " TEMPLATE template0");
					created.put(name, Kind.DATABASE);
					return new TestDatabase(JdbcUrls.withDatabase(server.adminUrl(), name), server.username(),
							server.password(), name);
				}
				catch (SQLException e) {
					if (!server.shared() || !"42501".equals(e.getSQLState())) {
						throw e;
					}
					log.info("{} may not create databases ({}); using a fresh schema per test class instead",
							server.username(), e.getMessage());
					schemasOnly = true;
				}
			}
			statement.execute("CREATE SCHEMA " + name);
			created.put(name, Kind.SCHEMA);
			return new TestDatabase(JdbcUrls.withParameter(server.adminUrl(), "currentSchema", name), server.username(),
					server.password(), name);
		}
		catch (SQLException e) {
			throw new IllegalStateException(
					"Cannot create test database " + name + " on " + server.description() + ": " + e.getMessage(), e);
		}
	}

	/**
	 * Drops the database (or schema) of {@code db}, terminating connections still using
	 * it.
	 */
	public static void drop(TestDatabase db) {
		String name = db.name();
		if (!NAME.matcher(name).matches()) {
			throw new IllegalArgumentException("Refusing to drop " + name + ": not a test database name");
		}
		Kind kind = created.remove(name);
		if (kind == null) {
			kind = db.jdbcUrl().contains("currentSchema=" + name) ? Kind.SCHEMA : Kind.DATABASE;
		}
		PostgresServer server = PostgresServers.get();
		try (Connection admin = server.connect()) {
			if (kind == Kind.DATABASE) {
				dropDatabase(admin, server, name);
			}
			else {
				dropSchema(admin, name);
			}
		}
		catch (SQLException e) {
			throw new IllegalStateException("Cannot drop test database " + name + ": " + e.getMessage(), e);
		}
	}

	/**
	 * Describes this JVM's server, e.g. {@code embedded PostgreSQL 18.4}; chooses and
	 * starts it if need be.
	 */
	public static String describeServer() {
		return PostgresServers.get().description();
	}

	/**
	 * Terminates the server processes of connections to {@code db} whose
	 * {@code application_name} is {@code LIKE
	 * applicationNameLike} (the caller's own connection is spared) and waits until they
	 * are gone. Pools made by {@link TestDatabase#newDataSource} use their pool name as
	 * application name, plain {@link TestDatabase#connect()} connections the database
	 * name.
	 *
	 * <p>
	 * With schema isolation the database is shared, so a broad pattern such as {@code %}
	 * also reaches other test classes' connections.
	 * @return how many backends were terminated
	 */
	public static int terminateConnections(TestDatabase db, String applicationNameLike) {
		try (Connection connection = db.connect()) {
			List<Integer> victims = new ArrayList<>();
			try (PreparedStatement select = connection.prepareStatement("""
					SELECT pid FROM pg_stat_activity
					WHERE datname = current_database() AND pid <> pg_backend_pid() AND application_name LIKE ?""")) {
				select.setString(1, applicationNameLike);
				try (ResultSet rows = select.executeQuery()) {
					while (rows.next()) {
						victims.add(rows.getInt(1));
					}
				}
			}
			if (victims.isEmpty()) {
				return 0;
			}
			Array pids = connection.createArrayOf("integer", victims.toArray(new Integer[0]));
			int killed = 0;
			try (PreparedStatement terminate = connection
				.prepareStatement("SELECT count(*) FROM unnest(?::integer[]) AS pid WHERE pg_terminate_backend(pid)")) {
				terminate.setArray(1, pids);
				try (ResultSet row = terminate.executeQuery()) {
					row.next();
					killed = row.getInt(1);
				}
			}
			awaitGone(connection, pids);
			return killed;
		}
		catch (SQLException e) {
			throw new IllegalStateException("Cannot terminate connections to " + db.name() + ": " + e.getMessage(), e);
		}
	}

	/**
	 * pg_terminate_backend only signals; fault tests want the backends really gone when
	 * this returns.
	 */
	private static void awaitGone(Connection connection, Array pids) throws SQLException {
		long deadline = System.nanoTime() + TERMINATION_WAIT.toNanos();
		try (PreparedStatement alive = connection
			.prepareStatement("SELECT count(*) FROM pg_stat_activity WHERE pid = ANY (?::integer[])")) {
			alive.setArray(1, pids);
			while (System.nanoTime() < deadline) {
				try (ResultSet row = alive.executeQuery()) {
					row.next();
					if (row.getInt(1) == 0) {
						return;
					}
				}
				sleep(Duration.ofMillis(10));
			}
		}
		log.warn("Terminated backends still present after {} s", TERMINATION_WAIT.toSeconds());
	}

	private static void dropDatabase(Connection admin, PostgresServer server, String name) throws SQLException {
		try (Statement statement = admin.createStatement()) {
			if (server.majorVersion() >= 13) {
				statement.execute("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)");
				return;
			}
			// Before 13 there is no FORCE; a connection sneaking in between would make
			// the DROP fail loudly.
			statement.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '" + name + "'");
			statement.execute("DROP DATABASE IF EXISTS " + name);
		}
	}

	private static void dropSchema(Connection admin, String name) throws SQLException {
		try (Statement statement = admin.createStatement()) {
			// Our own connections go first so they hold no locks; anyone else gets
			// lock_timeout, not a hang.
			statement.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
					+ " WHERE datname = current_database() AND pid <> pg_backend_pid()" + " AND left(application_name, "
					+ name.length() + ") = '" + name + "'");
			statement.execute("SET lock_timeout = '10s'");
			statement.execute("DROP SCHEMA IF EXISTS " + name + " CASCADE");
		}
	}

	/**
	 * Drops what crashed runs left behind on a shared server, once per JVM; failures are
	 * only logged.
	 */
	private static synchronized void cleanLeftoversOnce(PostgresServer server) {
		if (leftoversCleaned || !server.shared()) {
			return;
		}
		leftoversCleaned = true;
		long cutoff = Instant.now().minus(LEFTOVER_AGE).getEpochSecond();
		try (Connection admin = server.connect()) {
			for (String database : staleNames(admin,
					"SELECT datname FROM pg_database WHERE datname LIKE 'ductor\\_test\\_%'", cutoff)) {
				dropQuietly(() -> dropDatabase(admin, server, database), database);
			}
			for (String schema : staleNames(admin,
					"SELECT nspname FROM pg_namespace WHERE nspname LIKE 'ductor\\_test\\_%'", cutoff)) {
				dropQuietly(() -> dropSchema(admin, schema), schema);
			}
		}
		catch (SQLException e) {
			log.debug("Could not look for leftover test databases: {}", e.toString());
		}
	}

	private static List<String> staleNames(Connection admin, String query, long cutoffEpochSecond) throws SQLException {
		List<String> names = new ArrayList<>();
		try (Statement statement = admin.createStatement(); ResultSet rows = statement.executeQuery(query)) {
			while (rows.next()) {
				Matcher name = NAME.matcher(rows.getString(1));
				if (name.matches() && Long.parseLong(name.group(1)) < cutoffEpochSecond) {
					names.add(name.group());
				}
			}
		}
		return names;
	}

	private interface SqlAction {

		void run() throws SQLException;

	}

	private static void dropQuietly(SqlAction drop, String name) {
		try {
			drop.run();
			log.info("Dropped leftover test database {}", name);
		}
		catch (SQLException e) {
			log.debug("Could not drop leftover test database {}: {}", name, e.toString());
		}
	}

	private static String randomSuffix() {
		StringBuilder suffix = new StringBuilder();
		for (int i = 0; i < 8; i++) {
			suffix.append(Character.forDigit(RANDOM.nextInt(36), 36));
		}
		return suffix.toString();
	}

	private static void sleep(Duration duration) {
		try {
			Thread.sleep(duration.toMillis());
		}
		catch (InterruptedException e) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("Interrupted", e);
		}
	}

}
