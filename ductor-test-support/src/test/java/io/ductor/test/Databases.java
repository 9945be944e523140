package io.ductor.test;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * Queries the tests use to look at a test database from the inside, whether it is a
 * database or a schema.
 */
final class Databases {

	private Databases() {
	}

	/**
	 * Whether {@code db} is a schema in a shared database (the fallback) rather than a
	 * database of its own.
	 */
	static boolean isSchema(TestDatabase db) throws SQLException {
		try (Connection connection = db.connect()) {
			return !db.name().equals(queryString(connection, "SELECT current_database()"));
		}
	}

	/**
	 * Counts the user-visible objects of the isolation unit: the whole database, or the
	 * schema.
	 */
	static long userObjects(TestDatabase db) throws SQLException {
		String namespaces = isSchema(db) ? "n.nspname = current_schema()"
				: "n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\\_toast%'";
		try (Connection connection = db.connect()) {
			return queryLong(connection,
					"SELECT (SELECT count(*) FROM pg_class c JOIN pg_namespace n" + " ON n.oid = c.relnamespace WHERE "
							+ namespaces + ")"
							+ " + (SELECT count(*) FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE "
							+ namespaces + ")"
							+ " + (SELECT count(*) FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace WHERE "
							+ namespaces + ")");
		}
	}

	/** Whether a database or schema of that name still exists on the server. */
	static boolean exists(String name) throws SQLException {
		try (Connection admin = PostgresServers.get().connect()) {
			return queryLong(admin, "SELECT (SELECT count(*) FROM pg_database WHERE datname = '" + name + "')"
					+ " + (SELECT count(*) FROM pg_namespace WHERE nspname = '" + name + "')") > 0;
		}
	}

	static void execute(Connection connection, String sql) throws SQLException {
		try (Statement statement = connection.createStatement()) {
			statement.execute(sql);
		}
	}

	static String queryString(Connection connection, String sql) throws SQLException {
		try (Statement statement = connection.createStatement(); ResultSet row = statement.executeQuery(sql)) {
			row.next();
			return row.getString(1);
		}
	}

	static long queryLong(Connection connection, String sql) throws SQLException {
		try (Statement statement = connection.createStatement(); ResultSet row = statement.executeQuery(sql)) {
			row.next();
			return row.getLong(1);
		}
	}

}
