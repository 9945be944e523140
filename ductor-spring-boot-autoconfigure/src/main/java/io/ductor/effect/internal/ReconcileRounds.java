package io.ductor.effect.internal;

import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.List;
import java.util.Optional;

import javax.sql.DataSource;

import org.springframework.jdbc.core.simple.JdbcClient;

import io.ductor.effect.Receiver;

/**
 * The reconciliation rounds of attempts whose outcome is unknown: a round claimed
 * (counted and leased before the reconciler is asked) and its end recorded, fenced by
 * lease owner and round.
 */
public final class ReconcileRounds {

	private final JdbcClient jdbc;

	public ReconcileRounds(DataSource dataSource) {
		this.jdbc = JdbcClient.create(dataSource);
	}

	/**
	 * Claims up to {@code limit} due reconciliation rounds for {@code owner}: intents in
	 * {@code reconciling} whose next round is due and whose last round's lease (if any)
	 * expired. The round is counted and leased in the claiming statement, before the
	 * reconciler is asked, so a round a crash interrupts is counted, and the intent is
	 * claimed again once its lease expires.
	 */
	static final String CLAIM_RECONCILING_SQL = """
			WITH due AS (
			    SELECT id FROM eec_effect_intent
			    WHERE queue_status = 'reconciling' AND next_attempt_at <= ductor_now()
			      AND (lease_expires_at IS NULL OR lease_expires_at < ductor_now())
			    ORDER BY next_attempt_at, id
			    LIMIT :limit
			    FOR UPDATE SKIP LOCKED)
			UPDATE eec_effect_intent t
			SET reconcile_rounds = t.reconcile_rounds + 1, lease_owner = :owner,
			    lease_expires_at = ductor_now() + :leaseMs * interval '1 millisecond', updated_at = ductor_now()
			WHERE t.id = ANY (ARRAY(SELECT id FROM due))
			RETURNING t.id, t.effect_name, t.idempotency_key, t.payload::text AS payload, t.attempts, t.receiver,
			    t.next_attempt_at, t.reconcile_rounds, t.run_id, t.trace_context::text AS trace_context""";

	List<ReconcileClaim> claimReconciling(String owner, Duration lease, int limit) {
		return this.jdbc.sql(CLAIM_RECONCILING_SQL)
			.param("owner", owner)
			.param("leaseMs", lease.toMillis())
			.param("limit", limit)
			.query((rs, row) -> new ReconcileClaim(rs.getLong("id"), rs.getString("effect_name"),
					rs.getString("idempotency_key"), rs.getString("payload"), rs.getInt("attempts"),
					Receiver.valueOf(rs.getString("receiver")), rs.getObject("next_attempt_at", OffsetDateTime.class),
					rs.getInt("reconcile_rounds"), rs.getString("run_id"), rs.getString("trace_context")))
			.list();
	}

	/**
	 * Records the end of one reconciliation round, fenced by lease owner and round: a
	 * round whose lease was lost (and that another round took over) changes nothing.
	 * {@code complete} completes the intent; {@code retry} returns it to pending with the
	 * same key (failed when its attempts are used up, cancelled for a superseded alarm
	 * occurrence); {@code again} leaves it to a later round after {@code :delayMs};
	 * {@code park} waits for a decision.
	 */
	static final String SETTLE_RECONCILING_SQL = """
			UPDATE eec_effect_intent i
			SET status = CASE :action WHEN 'complete' THEN 'completed' WHEN 'again' THEN 'reconciling'
			        WHEN 'park' THEN 'needs_decision'
			        ELSE CASE WHEN i.attempts >= i.max_attempts THEN 'failed'
			                  WHEN i.superseded_at IS NOT NULL THEN 'cancelled' ELSE 'pending' END END,
			    reconcile_outcome = :outcome,
			    last_error = CASE WHEN :action = 'again' THEN i.last_error
			        ELSE left(:note || CASE WHEN :action = 'retry' AND i.attempts >= i.max_attempts
			                                THEN '; not retried: its attempts are used up'
			                                WHEN :action = 'retry' AND i.superseded_at IS NOT NULL
			                                THEN '; not retried: superseded by a rescheduled occurrence' ELSE '' END
			            || COALESCE('. The attempt had ended with: ' || i.last_error, ''), 4000) END,
			    next_attempt_at = CASE WHEN :action = 'again' THEN ductor_now() + :delayMs * interval '1 millisecond'
			        WHEN :action = 'retry' THEN ductor_now() ELSE i.next_attempt_at END,
			    lease_owner = NULL, lease_expires_at = NULL, updated_at = ductor_now(),
			    finished_at = CASE WHEN :action = 'complete'
			        OR (:action = 'retry' AND (i.attempts >= i.max_attempts OR i.superseded_at IS NOT NULL)) THEN ductor_now() END
			WHERE i.id = :id AND i.status = 'reconciling' AND i.lease_owner = :owner AND i.reconcile_rounds = :round
			RETURNING i.id, i.status, i.effect_name, i.idempotency_key""";

	/**
	 * @param action {@code complete}, {@code retry}, {@code again} or {@code park}
	 * @param outcome the reconciler's answer, as stored in {@code reconcile_outcome}
	 * @param note what the round found, for {@code last_error} (unless {@code again})
	 * @return the intent with its new status, or empty when the round's lease was lost
	 */
	public Optional<Settled> settleReconciling(String owner, ReconcileClaim claim, String action, String outcome,
			String note, Duration delay) {
		return this.jdbc.sql(SETTLE_RECONCILING_SQL)
			.param("action", action)
			.param("outcome", outcome)
			.param("note", note)
			.param("delayMs", (delay != null) ? delay.toMillis() : 0L)
			.param("id", claim.id())
			.param("owner", owner)
			.param("round", claim.round())
			.query((rs, row) -> Settled.read(rs))
			.optional();
	}

	/**
	 * A reconciliation round this reconciler claimed.
	 *
	 * @param attempt the attempt whose outcome is unknown
	 * @param round the round, from 1
	 * @param runId the run whose tick recorded the intent, or {@code null}
	 * @param traceContext the trace context stored with the intent (JSON), or
	 * {@code null}
	 */
	public record ReconcileClaim(long id, String effectName, String key, String payloadJson, int attempt,
			Receiver receiver, OffsetDateTime dueAt, int round, String runId, String traceContext) {
	}

}
