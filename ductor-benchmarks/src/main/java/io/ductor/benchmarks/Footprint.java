package io.ductor.benchmarks;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * What a system wrote into its database over a stretch of work, from the server's own
 * counters read before and after: commits ({@code pg_stat_database.xact_commit}), the
 * write-ahead log ({@code pg_wal_lsn_diff} of {@code pg_current_wal_insert_lsn()}, the
 * whole server's), rows inserted, updated (heap-only or not) and deleted per table
 * ({@code pg_stat_user_tables}) and, where {@code pg_walinspect} can be created (a
 * superuser on PostgreSQL 15 or newer), every log record of this database counted by
 * kind, with the B-tree entries each index received, and, where the server preloads
 * {@code pg_stat_statements}, what each statement cost.
 * <p>
 * A log record belongs to this database when it names one of its relations, or when its
 * transaction wrote one that does (its commit record names no relation). An index entry
 * is a B-tree {@code INSERT_LEAF} or {@code INSERT_POST} record, or a split of a leaf
 * page (the split record carries the new entry).
 */
final class Footprint {

	/**
	 * At most this many statements are shown per system, most log first, of those run at
	 * least once per 200 effects or writing at least a byte of log per effect.
	 */
	private static final int TOP_STATEMENTS = 12;

	private static final String WAL_RECORDS = """
			WITH r AS (
			    SELECT resource_manager, record_type, record_length, fpi_length, xid::text::bigint AS xid,
			           substring(block_ref FROM 'rel [0-9]+/([0-9]+)/')::oid AS db,
			           substring(block_ref FROM 'rel [0-9]+/[0-9]+/([0-9]+)')::oid AS node,
			           substring(description FROM 'level:? ([0-9]+)')::int AS level
			    FROM pg_get_wal_records_info(?::pg_lsn, ?::pg_lsn)),
			mine AS (
			    SELECT * FROM r
			    WHERE db = (SELECT oid FROM pg_database WHERE datname = current_database())
			       OR (xid <> 0 AND xid IN (SELECT xid FROM r
			                               WHERE db = (SELECT oid FROM pg_database WHERE datname = current_database()))))
			SELECT m.resource_manager || ' ' || regexp_replace(m.record_type, '\\+INIT$', ''), c.relname,
			       count(*), sum(m.record_length), sum(m.fpi_length),
			       count(*) FILTER (WHERE m.resource_manager = 'Btree' AND (m.record_type IN ('INSERT_LEAF', 'INSERT_POST')
			           OR (m.record_type IN ('SPLIT_L', 'SPLIT_R') AND m.level = 0)))
			FROM mine m LEFT JOIN pg_class c ON c.relfilenode = m.node AND m.node <> 0
			GROUP BY 1, 2""";

	private Footprint() {
	}

	/**
	 * The counters before the work.
	 *
	 * @param lsn the write-ahead log's insert position
	 * @param commits transactions committed in the database so far
	 * @param tables rows inserted, updated, updated heap-only and deleted, by table
	 * @param walInspect whether {@code pg_walinspect} is there to read the log back
	 * @param statements whether {@code pg_stat_statements} counts statements
	 */
	record Snapshot(String lsn, long commits, Map<String, long[]> tables, boolean walInspect, boolean statements) {
	}

	/**
	 * What the work wrote, per effect.
	 *
	 * @param commits commits per effect
	 * @param walBytes write-ahead log bytes per effect, the whole server's
	 * @param records log records of this database per effect, by kind:
	 * {@code [records, bytes, of which full-page images]}, empty without
	 * {@code pg_walinspect}
	 * @param indexEntries B-tree entries written per effect, by index, empty without
	 * {@code pg_walinspect}
	 * @param tables per effect, by table: rows inserted, updated, of which heap-only, and
	 * deleted
	 * @param statements what each statement cost, most log first, empty without
	 * {@code pg_stat_statements}
	 */
	record Delta(double commits, double walBytes, Map<String, double[]> records, Map<String, Double> indexEntries,
			Map<String, double[]> tables, List<StatementCost> statements) {

		/** Log bytes of this database's records per effect, and of full-page images. */
		double[] databaseWal() {
			double bytes = 0;
			double images = 0;
			for (double[] kind : this.records.values()) {
				bytes += kind[1];
				images += kind[2];
			}
			return new double[] { bytes, images };
		}

		double indexEntriesTotal() {
			return this.indexEntries.values().stream().mapToDouble(Double::doubleValue).sum();
		}

		/**
		 * Rows inserted, updated, updated heap-only and deleted per effect, all tables.
		 */
		double[] rows() {
			double[] sum = new double[4];
			for (double[] table : this.tables.values()) {
				for (int i = 0; i < 4; i++) {
					sum[i] += table[i];
				}
			}
			return sum;
		}

	}

	/**
	 * One statement's cost per effect, from {@code pg_stat_statements}.
	 *
	 * @param query its normalized text, shortened
	 * @param calls executions per effect
	 * @param rows rows per effect
	 * @param walBytes log bytes per effect
	 * @param walImages full-page images per effect
	 * @param meanMillis mean execution time
	 */
	record StatementCost(String query, double calls, double rows, double walBytes, double walImages,
			double meanMillis) {
	}

	/**
	 * Reads the counters before the work; when the server preloads
	 * {@code pg_stat_statements}, creates it in {@code db} and forgets what it counted
	 * there.
	 */
	static Snapshot take(Db db) {
		try (Connection connection = db.connect(); Statement statement = connection.createStatement()) {
			boolean walInspect = tryExecute(statement, "CREATE EXTENSION IF NOT EXISTS pg_walinspect");
			boolean statements = single(statement,
					"SELECT current_setting('shared_preload_libraries') LIKE '%pg_stat_statements%'")
				.equals("t") && tryExecute(statement, "CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
			Snapshot snapshot = new Snapshot(single(statement, "SELECT pg_current_wal_insert_lsn()::text"),
					Long.parseLong(single(statement,
							"SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()")),
					tables(statement), walInspect, statements);
			if (statements) {
				// last, so that none of the readings above is counted
				statement.execute("SELECT pg_stat_statements_reset(0, (SELECT oid FROM pg_database "
						+ "WHERE datname = current_database()), 0)");
			}
			return snapshot;
		}
		catch (SQLException ex) {
			throw new IllegalStateException("Cannot read the server's counters: " + ex.getMessage(), ex);
		}
	}

	/**
	 * Reads what was written since {@code before}, divided by {@code effects}. Call it
	 * once the system closed its connections: a backend hands its table and commit counts
	 * over when it exits.
	 */
	static Delta since(Db db, Snapshot before, int effects) {
		try (Connection connection = db.connect(); Statement statement = connection.createStatement()) {
			// first, so that none of the readings below is counted
			List<StatementCost> statements = before.statements() ? statements(statement, effects) : List.of();
			awaitOtherBackendsGone(statement);
			double commits = (Long.parseLong(
					single(statement, "SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()"))
					- before.commits()) / (double) effects;
			Map<String, double[]> tables = new TreeMap<>();
			tables(statement).forEach((name, after) -> {
				long[] was = before.tables().getOrDefault(name, new long[4]);
				double[] delta = new double[4];
				boolean any = false;
				for (int i = 0; i < 4; i++) {
					delta[i] = (after[i] - was[i]) / (double) effects;
					any |= delta[i] != 0;
				}
				if (any) {
					tables.put(name, delta);
				}
			});
			String end = single(statement, "SELECT pg_current_wal_insert_lsn()::text");
			double walBytes = Double
				.parseDouble(single(statement, "SELECT pg_wal_lsn_diff('" + end + "', '" + before.lsn() + "')"));
			Map<String, double[]> records = new TreeMap<>();
			Map<String, Double> indexEntries = new TreeMap<>();
			if (before.walInspect()) {
				// pg_walinspect reads only flushed log: a transaction that writes a
				// record
				// commits durably, so the log is flushed past the end once it returns
				statement.execute("SELECT pg_logical_emit_message(true, 'ductor-benchmarks', 'flush')");
				walRecords(connection, before.lsn(), end, effects, records, indexEntries);
			}
			return new Delta(commits, walBytes / effects, records, indexEntries, tables, statements);
		}
		catch (SQLException ex) {
			throw new IllegalStateException("Cannot read the server's counters: " + ex.getMessage(), ex);
		}
	}

	private static void walRecords(Connection connection, String from, String to, int effects,
			Map<String, double[]> records, Map<String, Double> indexEntries) throws SQLException {
		try (PreparedStatement query = connection.prepareStatement(WAL_RECORDS)) {
			query.setString(1, from);
			query.setString(2, to);
			try (ResultSet rows = query.executeQuery()) {
				while (rows.next()) {
					String kind = rows.getString(1);
					String relation = rows.getString(2);
					double[] sum = records.computeIfAbsent(kind, (k) -> new double[3]);
					sum[0] += rows.getLong(3) / (double) effects;
					sum[1] += rows.getLong(4) / (double) effects;
					sum[2] += rows.getLong(5) / (double) effects;
					long entries = rows.getLong(6);
					if (entries > 0) {
						indexEntries.merge((relation != null) ? relation : "(unknown relation)",
								entries / (double) effects, Double::sum);
					}
				}
			}
		}
		catch (SQLException ex) {
			// the segments were recycled by a checkpoint before they could be read: the
			// other figures stand
			Bench.progress("pg_walinspect could not read the log back: " + ex.getMessage());
			records.clear();
			indexEntries.clear();
		}
	}

	private static List<StatementCost> statements(Statement statement, int effects) throws SQLException {
		List<StatementCost> costs = new ArrayList<>();
		try (ResultSet rows = statement.executeQuery("""
				SELECT regexp_replace(query, '\\s+', ' ', 'g'), calls, rows, wal_bytes, wal_fpi,
				       total_exec_time / greatest(calls, 1)
				FROM pg_stat_statements
				WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
				  AND (calls >= %d OR wal_bytes >= %d)
				ORDER BY wal_bytes DESC, calls DESC LIMIT %d""".formatted(effects / 200, effects, TOP_STATEMENTS))) {
			while (rows.next()) {
				String query = rows.getString(1);
				costs.add(new StatementCost((query.length() > 160) ? query.substring(0, 157) + "…" : query,
						rows.getLong(2) / (double) effects, rows.getLong(3) / (double) effects,
						rows.getDouble(4) / effects, rows.getLong(5) / (double) effects, rows.getDouble(6)));
			}
		}
		return costs;
	}

	/** Rows inserted, updated, updated heap-only and deleted so far, by table. */
	private static Map<String, long[]> tables(Statement statement) throws SQLException {
		Map<String, long[]> tables = new LinkedHashMap<>();
		try (ResultSet rows = statement
			.executeQuery("SELECT relname, n_tup_ins, n_tup_upd, n_tup_hot_upd, n_tup_del FROM pg_stat_user_tables")) {
			while (rows.next()) {
				tables.put(rows.getString(1),
						new long[] { rows.getLong(2), rows.getLong(3), rows.getLong(4), rows.getLong(5) });
			}
		}
		return tables;
	}

	/**
	 * Waits (a few seconds at most) until no other backend is connected to this database:
	 * a backend leaves {@code pg_stat_activity} only after handing over its counts.
	 */
	private static void awaitOtherBackendsGone(Statement statement) throws SQLException {
		long deadline = System.nanoTime() + 5_000_000_000L;
		while (Long.parseLong(single(statement, "SELECT count(*) FROM pg_stat_activity "
				+ "WHERE datname = current_database() AND pid <> pg_backend_pid()")) > 0) {
			if (System.nanoTime() > deadline) {
				Bench.progress("other backends still connected; their last counts may be missing");
				return;
			}
			Bench.sleep(20);
		}
	}

	private static boolean tryExecute(Statement statement, String sql) {
		try {
			statement.execute(sql);
			return true;
		}
		catch (SQLException ex) {
			return false;
		}
	}

	private static String single(Statement statement, String sql) throws SQLException {
		try (ResultSet row = statement.executeQuery(sql)) {
			row.next();
			return row.getString(1);
		}
	}

}
