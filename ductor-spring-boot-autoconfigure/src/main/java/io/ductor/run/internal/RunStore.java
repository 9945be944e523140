package io.ductor.run.internal;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.OffsetDateTime;
import java.util.List;
import java.util.Optional;

import org.jspecify.annotations.Nullable;

import org.springframework.jdbc.core.simple.JdbcClient;

import io.ductor.internal.DbValues;
import io.ductor.run.RunCompensation;
import io.ductor.run.RunStatus;
import io.ductor.run.RunTransition;

/**
 * The SQL behind runs: {@code eec_run} and {@code eec_run_transition}.
 */
public class RunStore {

	private final JdbcClient jdbc;

	public RunStore(JdbcClient jdbc) {
		this.jdbc = jdbc;
	}

	/**
	 * @return 1 when the run was created, 0 when the id was taken
	 */
	public int insert(String runId, String type, String stateJson) {
		return this.jdbc.sql("""
				INSERT INTO eec_run (id, type, state) VALUES (:id, :type, :state::jsonb)
				ON CONFLICT (id) DO NOTHING""")
			.param("id", runId)
			.param("type", type)
			.param("state", stateJson)
			.update();
	}

	public Optional<String> findType(String runId) {
		return this.jdbc.sql("SELECT type FROM eec_run WHERE id = :id")
			.param("id", runId)
			.query(String.class)
			.optional();
	}

	public Optional<RunRow> find(String runId) {
		return findForTick(runId, null, false);
	}

	/**
	 * Reads the run and, in the same round trip, whether {@code stamp} was applied to it.
	 * @param lock whether to lock the run row until the transaction ends
	 */
	public Optional<RunRow> findForTick(String runId, String stamp, boolean lock) {
		return this.jdbc.sql("""
				SELECT r.id, r.type, r.status, r.state::text AS state, r.record_version, r.last_transition_seq,
				       r.failure_reason, r.created_at, r.updated_at, r.compensation,
				       EXISTS (SELECT 1 FROM eec_run_transition t WHERE t.run_id = r.id AND t.stamp = :stamp)
				           AS stamp_applied
				FROM eec_run r WHERE r.id = :id""" + (lock ? " FOR NO KEY UPDATE OF r" : ""))
			.param("id", runId)
			.param("stamp", stamp)
			.query(RunStore::mapRun)
			.optional();
	}

	/**
	 * Advances the run from {@code expectedVersion} and appends its transition, in one
	 * statement.
	 * @return 1 when applied, 0 when the version moved on (or the run finished) meanwhile
	 */
	public int advance(RunRow from, String stamp, String stateJson, String inputJson, RunStatus status,
			String failureReason) {
		return this.jdbc
			.sql("""
					WITH advanced AS (
					    UPDATE eec_run
					    SET state = :state::jsonb, status = :status, failure_reason = :reason,
					        record_version = record_version + 1, last_transition_seq = last_transition_seq + 1,
					        updated_at = ductor_now(), ended_at = CASE WHEN :status = 'active' THEN NULL ELSE ductor_now() END
					    WHERE id = :id AND record_version = :version AND status = 'active'
					    RETURNING id, record_version, last_transition_seq, status)
					INSERT INTO eec_run_transition (run_id, seq, stamp, input, record_version, run_status)
					SELECT id, last_transition_seq, :stamp, :input::jsonb, record_version, status FROM advanced""")
			.param("id", from.id())
			.param("version", from.recordVersion())
			.param("state", stateJson)
			.param("status", DbValues.of(status))
			.param("reason", failureReason)
			.param("stamp", stamp)
			.param("input", inputJson)
			.update();
	}

	/**
	 * Marks a failed run {@code compensating}: it has compensations that have not all
	 * finished.
	 */
	public void markCompensating(String runId) {
		this.jdbc.sql("UPDATE eec_run SET compensation = 'compensating' WHERE id = :id AND status = 'failed'")
			.param("id", runId)
			.update();
	}

	public List<RunTransition> transitions(String runId) {
		return this.jdbc.sql("""
				SELECT run_id, seq, stamp, input::text AS input, record_version, run_status, created_at
				FROM eec_run_transition WHERE run_id = :id ORDER BY seq""")
			.param("id", runId)
			.query((rs, row) -> new RunTransition(rs.getString("run_id"), rs.getLong("seq"), rs.getString("stamp"),
					rs.getString("input"), rs.getLong("record_version"),
					DbValues.parse(RunStatus.class, rs.getString("run_status")),
					rs.getObject("created_at", OffsetDateTime.class)))
			.list();
	}

	private static RunRow mapRun(ResultSet rs, int row) throws SQLException {
		return new RunRow(rs.getString("id"), rs.getString("type"),
				DbValues.parse(RunStatus.class, rs.getString("status")), rs.getString("state"),
				rs.getLong("record_version"), rs.getLong("last_transition_seq"), rs.getString("failure_reason"),
				rs.getObject("created_at", OffsetDateTime.class), rs.getObject("updated_at", OffsetDateTime.class),
				rs.getBoolean("stamp_applied"), compensation(rs.getString("compensation")));
	}

	public record RunRow(String id, String type, RunStatus status, String stateJson, long recordVersion,
			long lastTransitionSeq, String failureReason, OffsetDateTime createdAt, OffsetDateTime updatedAt,
			boolean stampApplied, RunCompensation compensation) {
	}

	private static RunCompensation compensation(@Nullable String value) {
		return (value != null) ? DbValues.parse(RunCompensation.class, value) : RunCompensation.NONE;
	}

}
