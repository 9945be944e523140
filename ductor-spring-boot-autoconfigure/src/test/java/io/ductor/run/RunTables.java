package io.ductor.run;

import java.util.LinkedHashMap;
import java.util.Map;

import javax.sql.DataSource;

import org.springframework.jdbc.core.simple.JdbcClient;

/**
 * Reads what tests assert on: row counts and a run's history, straight from the tables.
 */
final class RunTables {

	private final JdbcClient jdbc;

	RunTables(DataSource dataSource) {
		this.jdbc = JdbcClient.create(dataSource);
	}

	/** Row counts of every Ductor table plus the tests' own, and the runs' versions. */
	Map<String, Object> snapshot() {
		Map<String, Object> snapshot = new LinkedHashMap<>();
		for (String table : new String[] { "eec_run", "eec_run_transition", "eec_effect_intent",
				"eec_routing_idempotency", "test_side_table" }) {
			snapshot.put(table, count("SELECT count(*) FROM " + table));
		}
		snapshot.put("versions",
				this.jdbc
					.sql("SELECT string_agg(id || ':' || record_version || ':' || last_transition_seq || ':' || status"
							+ " || ':' || updated_at, ',' ORDER BY id) FROM eec_run")
					.query(String.class)
					.optional()
					.orElse(""));
		return snapshot;
	}

	long count(String sql, Object... params) {
		return this.jdbc.sql(sql).params(params).query(Long.class).single();
	}

	/**
	 * Asserts the history of one run is exactly 1..n without gaps or repeats, each
	 * transition carrying the version it produced, and the run row agreeing with it.
	 */
	void assertContiguousHistory(String runId, long n) {
		Map<String, Object> row = this.jdbc.sql("""
				SELECT count(*) AS transitions, count(DISTINCT seq) AS seqs, count(DISTINCT stamp) AS stamps,
				       min(seq) AS min_seq, max(seq) AS max_seq,
				       count(*) FILTER (WHERE record_version <> seq + 1) AS bad_versions
				FROM eec_run_transition WHERE run_id = ?""").param(runId).query().singleRow();
		org.assertj.core.api.Assertions.assertThat(row)
			.containsEntry("transitions", n)
			.containsEntry("seqs", n)
			.containsEntry("stamps", n)
			.containsEntry("min_seq", n == 0 ? null : 1L)
			.containsEntry("max_seq", n == 0 ? null : n)
			.containsEntry("bad_versions", 0L);
		Map<String, Object> run = this.jdbc.sql("SELECT record_version, last_transition_seq FROM eec_run WHERE id = ?")
			.param(runId)
			.query()
			.singleRow();
		org.assertj.core.api.Assertions.assertThat(run)
			.containsEntry("record_version", n + 1)
			.containsEntry("last_transition_seq", n);
	}

	void createSideTable() {
		this.jdbc.sql("CREATE TABLE IF NOT EXISTS test_side_table (id text PRIMARY KEY, note text)").update();
	}

	void writeSideRow(String id) {
		this.jdbc.sql("INSERT INTO test_side_table (id, note) VALUES (?, 'written by a step')").param(id).update();
	}

	long sideRows(String id) {
		return count("SELECT count(*) FROM test_side_table WHERE id = ?", id);
	}

}
