package io.ductor.effect.internal;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.OffsetDateTime;
import java.util.List;
import java.util.Optional;

import javax.sql.DataSource;

import org.springframework.jdbc.core.simple.JdbcClient;

import io.ductor.effect.EffectIntent;
import io.ductor.effect.EffectStatus;
import io.ductor.effect.Receiver;
import io.ductor.internal.DbValues;
import io.ductor.internal.InFlightIntents;

/**
 * Reads of {@code eec_effect_intent} for the operator's API and for tests: one intent by
 * id or key, a run's intents, a page of one status; and the database clock.
 */
public final class IntentReads {

	/** The columns of an {@link EffectIntent}, as {@link #intent} reads them. */
	static final String COLUMNS = """
			id, effect_name, idempotency_key, status, receiver, attempts, max_attempts, next_attempt_at,
			lease_owner, lease_expires_at, ordering_key, alarm_name, run_id, last_error, payload::text AS payload,
			created_at, updated_at, finished_at, reconcile_rounds, reconcile_outcome, trace_context::text AS trace_context""";

	private final JdbcClient jdbc;

	public IntentReads(DataSource dataSource) {
		this.jdbc = JdbcClient.create(dataSource);
	}

	public Optional<EffectIntent> find(long id) {
		return this.jdbc.sql("SELECT " + COLUMNS + " FROM eec_effect_intent WHERE id = :id")
			.param("id", id)
			.query(IntentReads::intent)
			.optional();
	}

	public Optional<EffectIntent> findByKey(String key) {
		return this.jdbc.sql("SELECT " + COLUMNS + " FROM eec_effect_intent WHERE idempotency_key = :key")
			.param("key", key)
			.query(IntentReads::intent)
			.optional();
	}

	public List<EffectIntent> listByRun(String runId) {
		return this.jdbc.sql("SELECT " + COLUMNS + " FROM eec_effect_intent WHERE run_id = :runId ORDER BY id")
			.param("runId", runId)
			.query(IntentReads::intent)
			.list();
	}

	public List<EffectIntent> list(EffectStatus status, long afterId, int limit) {
		return this.jdbc
			.sql("SELECT " + COLUMNS
					+ " FROM eec_effect_intent WHERE status = :status AND id > :afterId ORDER BY id LIMIT :limit")
			.param("status", DbValues.of(status))
			.param("afterId", afterId)
			.param("limit", limit)
			.query(IntentReads::intent)
			.list();
	}

	/**
	 * @return the current time of the database clock
	 */
	public OffsetDateTime databaseNow() {
		return this.jdbc.sql("SELECT ductor_clock()").query(OffsetDateTime.class).single();
	}

	/**
	 * The intents in flight, as a condition on {@code eec_effect_intent}: those whose
	 * lease the lease index watches, and those past the reconciler's sweep watermark
	 * (every lease the sweep watches is past it), found through the sweep's index.
	 */
	public static final String IN_FLIGHT = """
			status = 'in_flight' AND (queue_lease_expires_at IS NOT NULL
			    OR lease_xid >= (%s))""".formatted(InFlightIntents.SWEEP_WATERMARK_SQL);

	/** Reads one row of {@link #COLUMNS}. */
	public static EffectIntent intent(ResultSet rs, int row) throws SQLException {
		return new EffectIntent(rs.getLong("id"), rs.getString("effect_name"), rs.getString("idempotency_key"),
				DbValues.parse(EffectStatus.class, rs.getString("status")), Receiver.valueOf(rs.getString("receiver")),
				rs.getInt("attempts"), rs.getInt("max_attempts"), rs.getObject("next_attempt_at", OffsetDateTime.class),
				rs.getString("lease_owner"), rs.getObject("lease_expires_at", OffsetDateTime.class),
				rs.getString("ordering_key"), rs.getString("alarm_name"), rs.getString("run_id"),
				rs.getString("last_error"), rs.getString("payload"), rs.getObject("created_at", OffsetDateTime.class),
				rs.getObject("updated_at", OffsetDateTime.class), rs.getObject("finished_at", OffsetDateTime.class),
				rs.getInt("reconcile_rounds"), rs.getString("reconcile_outcome"), rs.getString("trace_context"));
	}

}
