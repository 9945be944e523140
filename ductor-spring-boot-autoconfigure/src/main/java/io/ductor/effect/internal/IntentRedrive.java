package io.ductor.effect.internal;

import java.sql.PreparedStatement;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;

import javax.sql.DataSource;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.simple.JdbcClient;

/**
 * The reconciler's redrive of in-flight intents whose lease expired: back to pending, to
 * reconciliation, to a decision or failed, by what the attempt may have done.
 */
public final class IntentRedrive {

	/**
	 * The in-flight intents whose lease the lease index watches and expired, oldest
	 * expiry first; the others are the sweep's ({@link LeaseSweep}).
	 */
	private static final String EXPIRED_SQL = """
			SELECT id FROM eec_effect_intent
			WHERE queue_lease_expires_at < ductor_now()
			ORDER BY queue_lease_expires_at
			LIMIT :limit
			FOR UPDATE SKIP LOCKED""";

	/**
	 * Redrives the in-flight intents whose ids {@code %s} gives. An attempt of a receiver
	 * that cannot deduplicate is parked for a decision only when it was marked started
	 * ({@link IntentOutcomes#markStarted}); one that never started goes back to
	 * {@code pending} with its attempt uncounted, since its receiver was never called; so
	 * does one of an effect among those {@code %3$s} names (the concurrency-limited
	 * effects, whose attempts are marked started too), whatever its receiver. A
	 * superseded alarm occurrence (its alarm was rescheduled or cancelled while it ran)
	 * that would go back to pending is cancelled instead: the newer occurrence holds the
	 * alarm's one pending place. An attempt that may have reached its receiver, of an
	 * effect among those {@code %2$s} names (the effects with a reconciler), goes to
	 * {@code reconciling} instead, whatever its receiver, with its attempt counted.
	 */
	static final String REDRIVE_UPDATE_SQL = """
			UPDATE eec_effect_intent i
			SET status = CASE WHEN (i.receiver = 'NOT_IDEMPOTENT' OR i.effect_name = ANY (%3$s)) AND i.attempt_started_at IS NULL
			                   THEN CASE WHEN i.superseded_at IS NOT NULL THEN 'cancelled' ELSE 'pending' END
			                  WHEN i.effect_name = ANY (%2$s) THEN 'reconciling'
			                  WHEN i.receiver = 'NOT_IDEMPOTENT' THEN 'needs_decision'
			                  WHEN i.attempts >= i.max_attempts THEN 'failed'
			                  WHEN i.superseded_at IS NOT NULL THEN 'cancelled' ELSE 'pending' END,
			    attempts = CASE WHEN (i.receiver = 'NOT_IDEMPOTENT' OR i.effect_name = ANY (%3$s)) AND i.attempt_started_at IS NULL
			                    THEN i.attempts - 1 ELSE i.attempts END,
			    last_error = CASE WHEN (i.receiver = 'NOT_IDEMPOTENT' OR i.effect_name = ANY (%3$s)) AND i.attempt_started_at IS NULL
			            THEN 'Lease of ' || i.lease_owner || ' expired before attempt ' || i.attempts
			                || ' started; the receiver was not called and the attempt is not counted'
			                || CASE WHEN i.superseded_at IS NOT NULL
			                        THEN '; not retried: superseded by a rescheduled occurrence' ELSE '' END
			        ELSE 'Lease of ' || i.lease_owner || ' expired during attempt ' || i.attempts
			            || '; the outcome of that attempt is unknown'
			            || CASE WHEN i.effect_name = ANY (%2$s) THEN '; asking its reconciler'
			                    WHEN i.superseded_at IS NOT NULL AND i.receiver = 'IDEMPOTENT' AND i.attempts < i.max_attempts
			                    THEN '; not retried: superseded by a rescheduled occurrence' ELSE '' END END,
			    next_attempt_at = ductor_now(), lease_owner = NULL, lease_expires_at = NULL, updated_at = ductor_now(),
			    reconcile_rounds = CASE WHEN i.effect_name = ANY (%2$s) THEN 0 ELSE i.reconcile_rounds END,
			    finished_at = CASE WHEN i.effect_name = ANY (%2$s) THEN NULL
			        WHEN i.superseded_at IS NOT NULL
			            AND (i.receiver = 'IDEMPOTENT' OR i.attempt_started_at IS NULL) THEN ductor_now()
			        WHEN i.receiver = 'IDEMPOTENT' AND i.attempts >= i.max_attempts THEN ductor_now() END
			WHERE i.id = ANY (%s) AND i.status = 'in_flight'
			RETURNING i.id, i.status, i.effect_name, i.idempotency_key""";

	/**
	 * Redrives expired leases, found by primary key; the attempts of the
	 * {@code reconciled} effects that may have reached their receiver go to
	 * reconciliation, and those of the {@code limited} effects that never started go back
	 * to pending uncounted.
	 */
	public static String redriveSql(Collection<String> reconciled, Collection<String> limited) {
		return "WITH expired AS (" + EXPIRED_SQL + ")\n" + REDRIVE_UPDATE_SQL.formatted("ARRAY(SELECT id FROM expired)",
				IntentClaims.textArray(reconciled), IntentClaims.textArray(limited));
	}

	private final JdbcTemplate template;

	private final JdbcClient jdbc;

	private final LeaseSweep sweep;

	public IntentRedrive(DataSource dataSource) {
		this.template = new JdbcTemplate(dataSource);
		this.jdbc = JdbcClient.create(this.template);
		this.sweep = new LeaseSweep(this.template);
	}

	/**
	 * Redrives in-flight intents whose lease expired: back to {@code pending}, or to
	 * {@code needs_decision} for receivers that cannot deduplicate, or to {@code failed}
	 * when the expired attempt was the last; the attempts of the {@code reconciled}
	 * effects that may have reached their receiver go to reconciliation. When one of them
	 * breaks a constraint, they are redriven one by one and the offender is failed with
	 * the reason.
	 */
	List<Settled> redriveExpired(int limit, Collection<String> reconciled, Collection<String> limited) {
		List<Settled> redriven = new ArrayList<>(redriveIndexed(limit, reconciled, limited));
		redriven.addAll(this.sweep.sweep(limit, reconciled, limited));
		return redriven;
	}

	/**
	 * The sweep of the leases taken at commit and by claims ({@link LeaseSweep}), alone.
	 * @return the intents it redrove
	 */
	public List<Settled> sweep(int limit, Collection<String> reconciled, Collection<String> limited) {
		return this.sweep.sweep(limit, reconciled, limited);
	}

	private List<Settled> redriveIndexed(int limit, Collection<String> reconciled, Collection<String> limited) {
		try {
			return this.jdbc.sql(redriveSql(reconciled, limited))
				.param("limit", limit)
				.query((rs, row) -> Settled.read(rs))
				.list();
		}
		catch (RuntimeException ex) {
			if (BatchFaults.rowFault(ex) == null) {
				throw ex;
			}
		}
		String redriveOne = REDRIVE_UPDATE_SQL.formatted("ARRAY[:id]::bigint[]", IntentClaims.textArray(reconciled),
				IntentClaims.textArray(limited));
		return BatchFaults.rowByRow(this.template, EXPIRED_SQL, Map.of("limit", limit), (connection, id) -> {
			try (PreparedStatement statement = BatchFaults.prepare(connection, redriveOne, Map.of("id", id))) {
				return Settled.readAll(statement);
			}
		}, (connection, id, fault) -> IntentOutcomes.failInFlight(connection, id, null, null,
				"The lease of this intent expired and Ductor could not redrive it: " + fault));
	}

}
