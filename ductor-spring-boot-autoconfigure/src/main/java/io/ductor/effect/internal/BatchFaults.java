package io.ductor.effect.internal;

import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Savepoint;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.namedparam.MapSqlParameterSource;
import org.springframework.jdbc.core.namedparam.NamedParameterUtils;
import org.springframework.jdbc.core.namedparam.ParsedSql;

/**
 * The per-row fallback shared by the batch statements on {@code eec_effect_intent}: a
 * batch that one row breaks (a constraint, a value out of range) is done again row by
 * row, each row in a savepoint of its own, and the offending row is marked with the
 * reason instead of holding up the others. Also the plumbing those statements share on a
 * plain JDBC connection: a transaction of their own, arrays, and named parameters bound
 * as JDBC binds them.
 */
final class BatchFaults {

	private static final Log logger = LogFactory.getLog(BatchFaults.class);

	private BatchFaults() {
	}

	/**
	 * The message of a failure that belongs to one row: a constraint it breaks (SQLSTATE
	 * class 23) or a value out of range (class 22); {@code null} for any other failure.
	 */
	static String rowFault(Throwable failure) {
		for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
			if (cause instanceof SQLException sql && sql.getSQLState() != null
					&& (sql.getSQLState().startsWith("23") || sql.getSQLState().startsWith("22"))) {
				String message = sql.getMessage();
				return (message != null) ? message.replaceAll("\\s+", " ").trim() : sql.getSQLState();
			}
		}
		return null;
	}

	/**
	 * Runs {@code work} in a savepoint of the connection's transaction; when it breaks a
	 * constraint (or a value is out of range), rolls back to the savepoint and runs
	 * {@code onFault} with the reason, in a savepoint of its own. A fault of
	 * {@code onFault} too leaves the row as it was.
	 */
	static <T> List<T> eachInSavepoint(Connection connection, SqlWork<List<T>> work, SqlFaultWork<List<T>> onFault)
			throws SQLException {
		Savepoint savepoint = connection.setSavepoint();
		try {
			List<T> result = work.run();
			connection.releaseSavepoint(savepoint);
			return result;
		}
		catch (SQLException ex) {
			String fault = rowFault(ex);
			if (fault == null) {
				throw ex;
			}
			connection.rollback(savepoint);
			Savepoint marking = connection.setSavepoint();
			try {
				List<T> result = onFault.run(fault);
				connection.releaseSavepoint(marking);
				return result;
			}
			catch (SQLException markingFailed) {
				if (rowFault(markingFailed) == null) {
					throw markingFailed;
				}
				connection.rollback(marking);
				logger.warn("Ductor could not record on the intent why it was skipped (" + fault + "): "
						+ rowFault(markingFailed));
				return List.of();
			}
		}
	}

	/**
	 * The fallback of a batch statement that one row broke: in one transaction, selects
	 * the batch's ids again (locking them) with {@code selectIds} and its named
	 * {@code parameters}, and runs {@code each} for every id in a savepoint of its own,
	 * and {@code onFault} for a row that breaks a constraint.
	 */
	static <T> List<T> rowByRow(JdbcTemplate template, String selectIds, Map<String, ?> parameters,
			RowWork<List<T>> each, RowFaultWork<List<T>> onFault) {
		List<T> result = template.execute((Connection connection) -> inTransaction(connection, null, () -> {
			List<Long> ids;
			try (PreparedStatement select = prepare(connection, selectIds, parameters)) {
				ids = ids(select);
			}
			List<T> done = new ArrayList<>();
			for (long id : ids) {
				done.addAll(eachInSavepoint(connection, () -> each.run(connection, id),
						(fault) -> onFault.run(connection, id, fault)));
			}
			return done;
		}));
		return (result != null) ? result : List.of();
	}

	/**
	 * Prepares {@code sql}, a statement with named parameters, on a plain connection,
	 * binding {@code parameters} by name as {@code JdbcClient} does.
	 */
	static PreparedStatement prepare(Connection connection, String sql, Map<String, ?> parameters) throws SQLException {
		ParsedSql parsed = NamedParameterUtils.parseSqlStatement(sql);
		MapSqlParameterSource source = new MapSqlParameterSource(parameters);
		Object[] values = NamedParameterUtils.buildValueArray(parsed, source, null);
		PreparedStatement statement = connection
			.prepareStatement(NamedParameterUtils.substituteNamedParameters(parsed, source));
		try {
			for (int i = 0; i < values.length; i++) {
				statement.setObject(i + 1, values[i]);
			}
			return statement;
		}
		catch (SQLException | RuntimeException ex) {
			statement.close();
			throw ex;
		}
	}

	/**
	 * Runs {@code work} in a transaction of its own that first applies {@code settings},
	 * if any.
	 */
	static <T> T inTransaction(Connection connection, String settings, SqlWork<T> work) throws SQLException {
		boolean autoCommit = connection.getAutoCommit();
		connection.setAutoCommit(false);
		try {
			if (settings != null) {
				try (Statement statement = connection.createStatement()) {
					statement.execute(settings);
				}
			}
			T result = work.run();
			connection.commit();
			return result;
		}
		catch (SQLException | RuntimeException ex) {
			connection.rollback();
			throw ex;
		}
		finally {
			connection.setAutoCommit(autoCommit);
		}
	}

	/** Runs the query and reads the first column of every row, an id. */
	static List<Long> ids(PreparedStatement statement) throws SQLException {
		List<Long> ids = new ArrayList<>();
		try (ResultSet rs = statement.executeQuery()) {
			while (rs.next()) {
				ids.add(rs.getLong(1));
			}
		}
		return ids;
	}

	static Array array(Connection connection, String type, Object[] values) throws SQLException {
		return connection.createArrayOf(type, values);
	}

	@FunctionalInterface
	interface SqlWork<T> {

		T run() throws SQLException;

	}

	@FunctionalInterface
	interface SqlFaultWork<T> {

		T run(String fault) throws SQLException;

	}

	@FunctionalInterface
	interface RowWork<T> {

		T run(Connection connection, long id) throws SQLException;

	}

	@FunctionalInterface
	interface RowFaultWork<T> {

		T run(Connection connection, long id, String fault) throws SQLException;

	}

}
