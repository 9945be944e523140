package io.ductor.effect.internal;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

import javax.sql.DataSource;

import org.jspecify.annotations.Nullable;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.simple.JdbcClient;

import io.ductor.effect.EffectStatus;
import io.ductor.effect.internal.IntentClaims.ClaimedIntent;
import io.ductor.internal.DbValues;
import io.ductor.internal.Ids;

/**
 * What becomes of a claimed attempt: its outcome recorded (in batches), its started mark
 * before a receiver that cannot deduplicate is called, or its hand-back when it never
 * started. Each is fenced by lease owner and attempt. The batch statements are bound by
 * position, with arrays, on the hot path; a batch that one row breaks is done again row
 * by row ({@link BatchFaults}).
 */
public final class IntentOutcomes {

	/**
	 * The fewest characters of a key whose compensation key {@link Compensations} may
	 * have digested: it digests when the prefixed key passes {@link Ids#MAX_LENGTH}
	 * UTF-16 units, and a character is at most two. Shorter keys are probed in their
	 * plain form only, so the completion of an ordinary intent hashes nothing.
	 */
	static final int DIGESTED_KEY_MIN_CHARS = (Ids.MAX_LENGTH - Compensations.PREFIX.length() + 2) / 2;

	/**
	 * Records a batch of outcomes, each fenced by lease owner and attempt. An attempt of
	 * a superseded alarm occurrence (its alarm was rescheduled or cancelled while it ran)
	 * may complete or fail, but instead of going back to pending beside the newer
	 * occurrence it is cancelled. An outcome {@code reconciling} starts the
	 * reconciliation of the attempt from its first round. The completions are counted in
	 * the minute's row of {@code eec_effect_throughput} (what the console shows), in the
	 * same statement. A completed attempt's receipt (what the receiver acknowledged, as
	 * the relays report it; {@code NULL} for other effects) goes to the unindexed
	 * {@code receipt} column, so the update stays heap-only. The rows are found through
	 * the array of their ids (the last parameter), by primary key: no index holds the
	 * in-flight rows alone.
	 */
	public static final String COMPLETE_SQL = """
			WITH done AS (
			UPDATE eec_effect_intent i
			SET status = CASE WHEN v.status = 'pending' AND i.superseded_at IS NOT NULL THEN 'cancelled' ELSE v.status END,
			    last_error = CASE WHEN v.status = 'pending' AND i.superseded_at IS NOT NULL
			        THEN 'superseded by a rescheduled occurrence; not retried after: ' || COALESCE(v.error, i.last_error, 'no error recorded')
			        ELSE COALESCE(v.error, i.last_error) END,
			    next_attempt_at = CASE WHEN v.status = 'reconciling' OR (v.status = 'pending' AND i.superseded_at IS NULL)
			        THEN ductor_now() + v.delay_ms * interval '1 millisecond' ELSE i.next_attempt_at END,
			    reconcile_rounds = CASE WHEN v.status = 'reconciling' THEN 0 ELSE i.reconcile_rounds END,
			    lease_owner = NULL, lease_expires_at = NULL, updated_at = ductor_now(),
			    finished_at = CASE WHEN v.status IN %1$s
			        OR (v.status = 'pending' AND i.superseded_at IS NOT NULL) THEN ductor_now() END,
			    receipt = COALESCE(v.receipt, i.receipt)
			FROM unnest(?::bigint[], ?::int[], ?::text[], ?::text[], ?::bigint[], ?::text[])
			    AS v(id, attempt, status, error, delay_ms, receipt)
			WHERE i.id = v.id AND i.status = 'in_flight' AND i.lease_owner = ? AND i.attempts = v.attempt
			  AND i.id = ANY (?::bigint[])
			RETURNING i.id, i.status, i.effect_name, i.idempotency_key,
			    extract(epoch FROM i.finished_at - i.next_attempt_at) * 1000 AS lag_ms,
			    i.run_id IS NULL AND EXISTS (SELECT 1 FROM eec_effect_intent c
			        WHERE c.idempotency_key IN ('%2$s' || i.idempotency_key,
			            CASE WHEN char_length(i.idempotency_key) >= %3$d
			                THEN '%2$ssha256:' || encode(sha256(convert_to(i.idempotency_key, 'UTF8')), 'hex') END)
			          AND c.compensation_of = i.id) AS compensated),
			counted AS (
			INSERT INTO eec_effect_throughput AS t (minute, completed, lag_ms_sum, lag_ms_max)
			SELECT date_trunc('minute', ductor_now()), count(*), sum(lag_ms), max(lag_ms)
			FROM done WHERE status = 'completed' HAVING count(*) > 0
			ON CONFLICT (minute) DO UPDATE SET completed = t.completed + excluded.completed,
			    lag_ms_sum = t.lag_ms_sum + excluded.lag_ms_sum, lag_ms_max = greatest(t.lag_ms_max, excluded.lag_ms_max))
			SELECT id, status, effect_name, idempotency_key, compensated FROM done"""
		.formatted(IntentStatuses.ENDED_SQL, Compensations.PREFIX, DIGESTED_KEY_MIN_CHARS);

	/**
	 * Settings of the transaction that records outcomes. It commits without waiting for
	 * the WAL flush: a completion lost in a server crash looks like an expired lease, and
	 * the reconciler redrives the intent (or parks it for a decision), which the
	 * at-least-once promise allows; claims keep a durable commit. No nested loops: the
	 * planner believes almost nothing is in flight (so the statistics say, between
	 * batches) and, left alone, loops over every in-flight row once per outcome once the
	 * plan is generic.
	 */
	public static final String COMPLETION_SETTINGS = "SET LOCAL synchronous_commit = off; SET LOCAL enable_nestloop = off";

	/**
	 * Hands back claimed intents, each fenced by lease owner and attempt: pending again
	 * with the attempt uncounted, or cancelled for a superseded alarm occurrence, whose
	 * newer occurrence holds the alarm's pending place.
	 */
	public static final String HAND_BACK_SQL = """
			UPDATE eec_effect_intent i
			SET status = CASE WHEN i.superseded_at IS NOT NULL THEN 'cancelled' ELSE 'pending' END,
			    attempts = i.attempts - 1, lease_owner = NULL, lease_expires_at = NULL, updated_at = ductor_now(),
			    last_error = CASE WHEN i.superseded_at IS NOT NULL
			        THEN 'superseded by a rescheduled occurrence before its attempt started' ELSE i.last_error END,
			    finished_at = CASE WHEN i.superseded_at IS NOT NULL THEN ductor_now() END
			FROM unnest(?::bigint[], ?::int[]) AS v(id, attempt)
			WHERE i.id = v.id AND i.status = 'in_flight' AND i.lease_owner = ? AND i.attempts = v.attempt
			  AND i.attempt_started_at IS NULL
			RETURNING i.id""";

	/**
	 * Fails an in-flight intent whose outcome, hand-back or redrive broke a constraint,
	 * with the reason; fenced by lease owner and attempt when they are given.
	 */
	private static final String FAIL_IN_FLIGHT_SQL = """
			UPDATE eec_effect_intent
			SET status = 'failed', last_error = ?, lease_owner = NULL, lease_expires_at = NULL,
			    updated_at = ductor_now(), finished_at = ductor_now()
			WHERE id = ? AND status = 'in_flight' AND (?::text IS NULL OR lease_owner = ?)
			  AND (?::int IS NULL OR attempts = ?)
			RETURNING id, status, effect_name, idempotency_key""";

	private final JdbcTemplate template;

	private final JdbcClient jdbc;

	public IntentOutcomes(DataSource dataSource) {
		this.template = new JdbcTemplate(dataSource);
		this.jdbc = JdbcClient.create(this.template);
	}

	/**
	 * Records the outcomes of attempts, each fenced by lease owner and attempt number: an
	 * outcome whose lease was lost (redriven, reclaimed) changes nothing. When one
	 * outcome breaks a constraint, the batch is recorded again outcome by outcome, each
	 * in a savepoint, and the offending intent is failed with the reason: one intent can
	 * never hold up the others.
	 * @return the intents actually updated, with their new status
	 */
	public List<Settled> complete(String owner, List<Completion> completions) {
		try {
			return this.template.execute((Connection connection) -> BatchFaults.inTransaction(connection,
					COMPLETION_SETTINGS, () -> completeBatch(connection, owner, completions)));
		}
		catch (RuntimeException ex) {
			if (BatchFaults.rowFault(ex) == null) {
				throw ex;
			}
		}
		return this.template
			.execute((Connection connection) -> BatchFaults.inTransaction(connection, COMPLETION_SETTINGS, () -> {
				List<Settled> settled = new ArrayList<>();
				for (Completion completion : completions) {
					settled.addAll(BatchFaults.eachInSavepoint(connection,
							() -> completeBatch(connection, owner, List.of(completion)),
							(fault) -> failInFlight(connection, completion.intentId(), owner, completion.attempt(),
									"Ductor could not record the outcome of attempt " + completion.attempt() + " ("
											+ DbValues.of(completion.status()) + "): " + fault
											+ ((completion.error() != null)
													? "; the attempt's error: " + completion.error() : ""))));
				}
				return settled;
			}));
	}

	private static List<Settled> completeBatch(Connection connection, String owner, List<Completion> completions)
			throws SQLException {
		int n = completions.size();
		Long[] ids = new Long[n];
		Integer[] attempts = new Integer[n];
		String[] statuses = new String[n];
		String[] errors = new String[n];
		Long[] delays = new Long[n];
		String[] receipts = new String[n];
		for (int i = 0; i < n; i++) {
			Completion completion = completions.get(i);
			ids[i] = completion.intentId();
			attempts[i] = completion.attempt();
			statuses[i] = DbValues.of(completion.status());
			errors[i] = completion.error();
			delays[i] = (completion.retryDelay() != null) ? completion.retryDelay().toMillis() : 0L;
			receipts[i] = completion.receipt();
		}
		try (PreparedStatement statement = connection.prepareStatement(COMPLETE_SQL)) {
			statement.setArray(1, BatchFaults.array(connection, "bigint", ids));
			statement.setArray(2, BatchFaults.array(connection, "int", attempts));
			statement.setArray(3, BatchFaults.array(connection, "text", statuses));
			statement.setArray(4, BatchFaults.array(connection, "text", errors));
			statement.setArray(5, BatchFaults.array(connection, "bigint", delays));
			statement.setArray(6, BatchFaults.array(connection, "text", receipts));
			statement.setString(7, owner);
			statement.setArray(8, BatchFaults.array(connection, "bigint", ids));
			List<Settled> settled = new ArrayList<>(n);
			try (ResultSet rs = statement.executeQuery()) {
				while (rs.next()) {
					settled.add(Settled.readCompleted(rs));
				}
			}
			return settled;
		}
	}

	/**
	 * Fails an in-flight intent whose outcome, hand-back or redrive broke a constraint,
	 * with the reason; fenced by lease owner and attempt when they are given.
	 */
	static List<Settled> failInFlight(Connection connection, long id, String owner, Integer attempt, String reason)
			throws SQLException {
		try (PreparedStatement statement = connection.prepareStatement(FAIL_IN_FLIGHT_SQL)) {
			statement.setString(1, reason);
			statement.setLong(2, id);
			statement.setString(3, owner);
			statement.setString(4, owner);
			statement.setObject(5, attempt, Types.INTEGER);
			statement.setObject(6, attempt, Types.INTEGER);
			return Settled.readAll(statement);
		}
	}

	/**
	 * Marks the claimed attempt started, just before a receiver that cannot deduplicate
	 * is called: the mark is what lets the reconciler tell an attempt that may have
	 * reached the receiver from one that cannot have. It is fenced like a completion
	 * (lease owner and attempt), and also by a lease that has not expired and a mark not
	 * yet set, so of two tasks holding the same claim at most one starts it. It commits
	 * durably whatever the session's {@code synchronous_commit}: a mark lost in a server
	 * crash would let a called receiver be called again with no decision.
	 * @return whether the attempt may start; {@code false} when the lease was lost
	 */
	public boolean markStarted(String owner, long id, int attempt) {
		return this.jdbc.sql("""
				UPDATE eec_effect_intent SET attempt_started_at = ductor_now()
				WHERE id = :id AND status = 'in_flight' AND lease_owner = :owner AND attempts = :attempt
				  AND lease_expires_at > ductor_now() AND attempt_started_at IS NULL
				  AND set_config('synchronous_commit', CASE WHEN current_setting('synchronous_commit') = 'off'
				      THEN 'on' ELSE current_setting('synchronous_commit') END, true) IS NOT NULL""")
			.param("id", id)
			.param("owner", owner)
			.param("attempt", attempt)
			.update() == 1;
	}

	/**
	 * Returns claimed intents whose attempt never started, undoing the attempt count.
	 * When one of them breaks a constraint, they are handed back one by one, each in a
	 * savepoint, and the offender is failed with the reason. An attempt marked started is
	 * never handed back, whoever asks.
	 * @return how many were handed back
	 */
	public int handBack(String owner, List<ClaimedIntent> intents) {
		if (intents.isEmpty()) {
			return 0;
		}
		try {
			Integer count = this.template.execute((Connection connection) -> handBackBatch(connection, owner, intents));
			return (count != null) ? count : 0;
		}
		catch (RuntimeException ex) {
			if (BatchFaults.rowFault(ex) == null) {
				throw ex;
			}
		}
		Integer count = this.template
			.execute((Connection connection) -> BatchFaults.inTransaction(connection, null, () -> {
				int handedBack = 0;
				for (ClaimedIntent intent : intents) {
					handedBack += BatchFaults.eachInSavepoint(connection,
							() -> Collections.nCopies(handBackBatch(connection, owner, List.of(intent)), intent.id()),
							(fault) -> {
								failInFlight(connection, intent.id(), owner, intent.attempt(),
										"Ductor could not hand back attempt " + intent.attempt()
												+ ", which never started: " + fault);
								return List.<Long>of();
							})
						.size();
				}
				return handedBack;
			}));
		return (count != null) ? count : 0;
	}

	private static int handBackBatch(Connection connection, String owner, List<ClaimedIntent> intents)
			throws SQLException {
		Long[] ids = intents.stream().map(ClaimedIntent::id).toArray(Long[]::new);
		Integer[] attempts = intents.stream().map(ClaimedIntent::attempt).toArray(Integer[]::new);
		try (PreparedStatement statement = connection.prepareStatement(HAND_BACK_SQL)) {
			statement.setArray(1, BatchFaults.array(connection, "bigint", ids));
			statement.setArray(2, BatchFaults.array(connection, "int", attempts));
			statement.setString(3, owner);
			return BatchFaults.ids(statement).size();
		}
	}

	/**
	 * The outcome of one attempt, to be recorded, with what the receiver acknowledged
	 * when the effect reported it ({@link AttemptReceipt}).
	 */
	public record Completion(long intentId, int attempt, EffectStatus status, String error, Duration retryDelay,
			@Nullable String receipt) {

		public Completion(long intentId, int attempt, EffectStatus status, String error, Duration retryDelay) {
			this(intentId, attempt, status, error, retryDelay, null);
		}

	}

}
