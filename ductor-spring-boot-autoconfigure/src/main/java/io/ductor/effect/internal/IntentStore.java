package io.ductor.effect.internal;

import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Savepoint;
import java.sql.Statement;
import java.sql.Types;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;

import javax.sql.DataSource;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.simple.JdbcClient;

import io.ductor.effect.EffectIntent;
import io.ductor.effect.EffectStatus;
import io.ductor.effect.OperatorDecision;
import io.ductor.effect.Receiver;

/**
 * The SQL behind the outbox: {@code eec_effect_intent}. Every statement is a single round
 * trip; claims and completions work on batches.
 */
public class IntentStore {

	private static final Log logger = LogFactory.getLog(IntentStore.class);

	/** The channel a committed intent wakes drainers on. */
	public static final String CHANNEL = "ductor_effects";

	/** Statuses that hold up later intents of the same ordering key. */
	private static final String BLOCKING_STATUSES = "'pending', 'in_flight', 'reconciling', 'failed', 'needs_decision'";

	private static final String COLUMNS = """
			id, effect_name, idempotency_key, status, receiver, attempts, max_attempts, next_attempt_at,
			lease_owner, lease_expires_at, ordering_key, alarm_name, run_id, last_error, payload::text AS payload,
			created_at, updated_at, finished_at, reconcile_rounds, reconcile_outcome, trace_context::text AS trace_context""";

	/** The in-flight intents whose lease expired, oldest expiry first. */
	private static final String EXPIRED_SQL = """
			SELECT id FROM eec_effect_intent
			WHERE status = 'in_flight' AND lease_expires_at < ductor_now()
			ORDER BY lease_expires_at
			LIMIT :limit
			FOR UPDATE SKIP LOCKED""";

	/**
	 * Redrives the in-flight intents whose ids {@code %s} gives. An attempt of a receiver
	 * that cannot deduplicate is parked for a decision only when it was marked started
	 * ({@link #markStarted}); one that never started goes back to {@code pending} with
	 * its attempt uncounted, since its receiver was never called. A superseded alarm
	 * occurrence (its alarm was rescheduled or cancelled while it ran) that would go back
	 * to pending is cancelled instead: the newer occurrence holds the alarm's one pending
	 * place. An attempt that may have reached its receiver, of an effect among those
	 * {@code %2$s} names (the effects with a reconciler), goes to {@code reconciling}
	 * instead, whatever its receiver, with its attempt counted.
	 */
	private static final String REDRIVE_UPDATE_SQL = """
			UPDATE eec_effect_intent i
			SET status = CASE WHEN i.receiver = 'NOT_IDEMPOTENT' AND i.attempt_started_at IS NULL
			                   THEN CASE WHEN i.superseded_at IS NOT NULL THEN 'cancelled' ELSE 'pending' END
			                  WHEN i.effect_name = ANY (%2$s) THEN 'reconciling'
			                  WHEN i.receiver = 'NOT_IDEMPOTENT' THEN 'needs_decision'
			                  WHEN i.attempts >= i.max_attempts THEN 'failed'
			                  WHEN i.superseded_at IS NOT NULL THEN 'cancelled' ELSE 'pending' END,
			    attempts = CASE WHEN i.receiver = 'NOT_IDEMPOTENT' AND i.attempt_started_at IS NULL
			                    THEN i.attempts - 1 ELSE i.attempts END,
			    last_error = CASE WHEN i.receiver = 'NOT_IDEMPOTENT' AND i.attempt_started_at IS NULL
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
	 * Redrives expired leases (of effects none of which has a reconciler): found by
	 * primary key.
	 */
	public static final String REDRIVE_SQL = redriveSql(Set.of());

	/**
	 * Redrives expired leases, found by primary key as the batch statements below; the
	 * attempts of the {@code reconciled} effects that may have reached their receiver go
	 * to reconciliation.
	 */
	static String redriveSql(Collection<String> reconciled) {
		return "WITH expired AS (" + EXPIRED_SQL + ")\n"
				+ REDRIVE_UPDATE_SQL.formatted("ARRAY(SELECT id FROM expired)", textArray(reconciled));
	}

	/**
	 * A literal {@code text[]} of fixed names (effect names, known at start-up): one plan
	 * whatever the round.
	 */
	static String textArray(Collection<String> values) {
		return "ARRAY["
				+ String.join(", ", values.stream().map((value) -> "'" + value.replace("'", "''") + "'").toList())
				+ "]::text[]";
	}

	/**
	 * One batch of the parked intents of one effect that were parked at or before
	 * {@code :asOf} (the start of the operator's call, from the database clock): an
	 * intent the call already moved, or that a drainer touched since, is never in a later
	 * batch of the same call. The literal statuses let even a generic plan read the
	 * parked index.
	 */
	private static final String PARKED_SQL = """
			SELECT id FROM eec_effect_intent
			WHERE effect_name = :name AND status = :from AND status IN ('failed', 'needs_decision')
			  AND updated_at <= :asOf
			ORDER BY updated_at LIMIT :batch FOR UPDATE SKIP LOCKED""";

	/**
	 * Marks superseded the other live occurrences of the alarms of the intents the
	 * {@code moved} statement put back to pending: an occurrence an operator runs again
	 * is its alarm's live one, as after a reschedule, so another occurrence still running
	 * (or parked) may finish or fail but never returns to pending beside it.
	 */
	private static final String SUPERSEDE_OTHER_OCCURRENCES = """
			, superseded AS (
			    UPDATE eec_effect_intent o SET superseded_at = COALESCE(o.superseded_at, ductor_now())
			    WHERE o.alarm_name = ANY (ARRAY(SELECT m.alarm_name FROM moved m
			                                    WHERE m.alarm_name IS NOT NULL AND m.status = 'pending'))
			      AND o.status IN ('in_flight', 'reconciling', 'failed', 'needs_decision')
			      AND o.id <> ALL (ARRAY(SELECT m.id FROM moved m))
			    RETURNING o.id)
			""";

	/**
	 * Moves the parked intents whose ids {@code %s} gives back to pending, superseding
	 * the other live occurrences of their alarms; selects the ids moved.
	 */
	private static final String RETRY_UPDATE_SQL = """
			WITH moved AS (
			    UPDATE eec_effect_intent
			    SET status = 'pending', next_attempt_at = ductor_now(), updated_at = ductor_now(), finished_at = NULL,
			        max_attempts = attempts + :budget, superseded_at = NULL,
			        last_error = COALESCE(last_error, '') || ' (retried in bulk)'
			    WHERE id = ANY (%s) AND status IN ('failed', 'needs_decision')
			    RETURNING id, alarm_name, status)""" + SUPERSEDE_OTHER_OCCURRENCES + "SELECT id FROM moved";

	/** Moves one batch of parked intents of one effect back to pending. */
	public static final String RETRY_BATCH_SQL = RETRY_UPDATE_SQL.formatted("ARRAY(" + PARKED_SQL + ")");

	/**
	 * Supersedes the live occurrences of one alarm, found through the alarm's live index:
	 * the pending one is cancelled, the others are marked.
	 */
	public static final String SUPERSEDE_ALARM_SQL = """
			UPDATE eec_effect_intent
			SET status = CASE WHEN status = 'pending' THEN 'cancelled' ELSE status END,
			    superseded_at = COALESCE(superseded_at, ductor_now()),
			    last_error = CASE WHEN status = 'pending' THEN 'superseded by a rescheduled occurrence' ELSE last_error END,
			    updated_at = CASE WHEN status = 'pending' THEN ductor_now() ELSE updated_at END,
			    finished_at = CASE WHEN status = 'pending' THEN ductor_now() ELSE finished_at END
			WHERE alarm_name = ? AND status IN ('pending', 'in_flight', 'reconciling', 'failed', 'needs_decision')
			RETURNING status""";

	/** One batch of the finished intents past their retention, oldest first. */
	private static final String PURGEABLE_SQL = """
			SELECT id FROM eec_effect_intent
			WHERE status IN ('completed', 'cancelled')
			  AND finished_at < ductor_now() - :retentionMs * interval '1 millisecond'
			ORDER BY finished_at
			LIMIT :batch
			FOR UPDATE SKIP LOCKED""";

	/** Deletes one batch of finished intents past their retention. */
	public static final String PURGE_SQL = "DELETE FROM eec_effect_intent WHERE id = ANY (ARRAY(" + PURGEABLE_SQL
			+ "))";

	/**
	 * Records a batch of outcomes, each fenced by lease owner and attempt. An attempt of
	 * a superseded alarm occurrence (its alarm was rescheduled or cancelled while it ran)
	 * may complete or fail, but instead of going back to pending beside the newer
	 * occurrence it is cancelled. An outcome {@code reconciling} starts the
	 * reconciliation of the attempt from its first round.
	 */
	public static final String COMPLETE_SQL = """
			UPDATE eec_effect_intent i
			SET status = CASE WHEN v.status = 'pending' AND i.superseded_at IS NOT NULL THEN 'cancelled' ELSE v.status END,
			    last_error = CASE WHEN v.status = 'pending' AND i.superseded_at IS NOT NULL
			        THEN 'superseded by a rescheduled occurrence; not retried after: ' || COALESCE(v.error, i.last_error, 'no error recorded')
			        ELSE COALESCE(v.error, i.last_error) END,
			    next_attempt_at = CASE WHEN v.status = 'reconciling' OR (v.status = 'pending' AND i.superseded_at IS NULL)
			        THEN ductor_now() + v.delay_ms * interval '1 millisecond' ELSE i.next_attempt_at END,
			    reconcile_rounds = CASE WHEN v.status = 'reconciling' THEN 0 ELSE i.reconcile_rounds END,
			    lease_owner = NULL, lease_expires_at = NULL, updated_at = ductor_now(),
			    finished_at = CASE WHEN v.status IN ('completed', 'failed')
			        OR (v.status = 'pending' AND i.superseded_at IS NOT NULL) THEN ductor_now() END
			FROM unnest(?::bigint[], ?::int[], ?::text[], ?::text[], ?::bigint[])
			    AS v(id, attempt, status, error, delay_ms)
			WHERE i.id = v.id AND i.status = 'in_flight' AND i.lease_owner = ? AND i.attempts = v.attempt
			RETURNING i.id, i.status, i.effect_name, i.idempotency_key""";

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

	private final JdbcClient jdbc;

	private final JdbcTemplate template;

	private volatile Boolean commitTimestamps;

	private volatile EffectSlots slots;

	/** Which side of a shared batch gets the larger half at the next claim. */
	private final AtomicInteger turn = new AtomicInteger();

	public IntentStore(DataSource dataSource) {
		this.template = new JdbcTemplate(dataSource);
		this.jdbc = JdbcClient.create(this.template);
	}

	/**
	 * Records one intent; bound by position, with the statement text fixed, so that a
	 * call builds no SQL and the driver reuses one server-side prepared statement per
	 * connection.
	 */
	static final String INSERT_SQL = """
			INSERT INTO eec_effect_intent (effect_name, idempotency_key, payload, payload_fingerprint, receiver,
			    max_attempts, next_attempt_at, ordering_key, alarm_name, run_id, trace_context)
			VALUES (?, ?, ?::jsonb, ?, ?, ?, ductor_now() + ? * interval '1 millisecond', ?, ?, ?, ?::jsonb)
			ON CONFLICT (idempotency_key) DO NOTHING
			RETURNING id""";

	/**
	 * @return the new intent's id, or 0 when the key is taken
	 */
	long insert(NewIntent intent) {
		Long id = this.template.execute(INSERT_SQL, (PreparedStatement statement) -> {
			statement.setString(1, intent.effectName());
			statement.setString(2, intent.key());
			statement.setString(3, intent.payloadJson());
			statement.setString(4, intent.fingerprint());
			statement.setString(5, intent.receiver().name());
			statement.setInt(6, intent.maxAttempts());
			statement.setLong(7, intent.delay().toMillis());
			statement.setString(8, intent.orderingKey());
			statement.setString(9, intent.alarmName());
			statement.setString(10, intent.runId());
			statement.setString(11, intent.traceContext());
			try (ResultSet row = statement.executeQuery()) {
				return row.next() ? row.getLong(1) : 0L;
			}
		});
		return (id != null) ? id : 0;
	}

	/**
	 * Records one intent already claimed by {@code owner}: in flight, attempt 1, under a
	 * lease from the database clock, so that the committing instance runs it without a
	 * claim while every other instance and the reconciler see an ordinary lease. Only for
	 * intents due at once and without an ordering key; bound like {@link #INSERT_SQL}.
	 */
	static final String INSERT_LEASED_SQL = """
			INSERT INTO eec_effect_intent (effect_name, idempotency_key, payload, payload_fingerprint, receiver,
			    max_attempts, run_id, trace_context, status, attempts, lease_owner, lease_expires_at)
			VALUES (?, ?, ?::jsonb, ?, ?, ?, ?, ?::jsonb, 'in_flight', 1, ?, ductor_clock() + ? * interval '1 millisecond')
			ON CONFLICT (idempotency_key) DO NOTHING
			RETURNING id, (extract(epoch FROM next_attempt_at) * 1000000)::bigint""";

	/**
	 * @return the intent as claimed by {@code owner}, attempt 1, or {@code null} when the
	 * key is taken
	 */
	ClaimedIntent insertLeased(NewIntent intent, String owner, Duration lease) {
		return this.template.execute(INSERT_LEASED_SQL, (PreparedStatement statement) -> {
			statement.setString(1, intent.effectName());
			statement.setString(2, intent.key());
			statement.setString(3, intent.payloadJson());
			statement.setString(4, intent.fingerprint());
			statement.setString(5, intent.receiver().name());
			statement.setInt(6, intent.maxAttempts());
			statement.setString(7, intent.runId());
			statement.setString(8, intent.traceContext());
			statement.setString(9, owner);
			statement.setLong(10, lease.toMillis());
			try (ResultSet row = statement.executeQuery()) {
				if (!row.next()) {
					return null;
				}
				// as a number: cheaper to read than a timestamp's text, on the committing
				// thread
				long micros = row.getLong(2);
				OffsetDateTime due = OffsetDateTime.ofInstant(Instant.ofEpochSecond(Math.floorDiv(micros, 1_000_000L),
						Math.floorMod(micros, 1_000_000L) * 1000L), ZoneOffset.UTC);
				// claimed at the commit that records it: no time passes between the two
				return new ClaimedIntent(row.getLong(1), intent.effectName(), intent.key(), intent.payloadJson(), 1,
						intent.maxAttempts(), intent.receiver(), due, due, 0.0, intent.runId(), intent.traceContext());
			}
		});
	}

	/**
	 * @return the effect name and payload fingerprint the key is bound to
	 */
	Optional<String[]> keyBinding(String key) {
		return this.jdbc.sql("SELECT effect_name, payload_fingerprint FROM eec_effect_intent WHERE idempotency_key = ?")
			.param(key)
			.query((rs, row) -> new String[] { rs.getString(1), rs.getString(2) })
			.optional();
	}

	/**
	 * Serializes the caller's transaction with others holding the same lock name, until
	 * commit.
	 */
	public void lockUntilCommit(String lockName) {
		this.jdbc.sql("SELECT pg_advisory_xact_lock(hashtextextended(?, 0))").param(lockName).query().singleRow();
	}

	/**
	 * Sends the wake-up notification, signed by {@code sender}, inside the caller's
	 * transaction: delivered when it commits.
	 */
	void notifyDrainers(String sender) {
		this.jdbc.sql("SELECT pg_notify('" + CHANNEL + "', ?)").param(sender).query().singleRow();
	}

	/**
	 * Sends the wake-up notification, signed by {@code sender}, in a transaction of its
	 * own that commits without waiting for the WAL flush: queuing a notification gives
	 * the transaction an id and so a commit record, and a hint needs no durability.
	 */
	void notifyDrainersNow(String sender) {
		this.jdbc.sql("SELECT set_config('synchronous_commit', 'off', true), pg_notify('" + CHANNEL + "', ?)")
			.param(sender)
			.query()
			.singleRow();
	}

	/**
	 * Supersedes the occurrences of an alarm, in the caller's transaction (which holds
	 * the alarm's lock): the pending one is cancelled; one that runs or is parked is
	 * marked superseded, under a row lock held until the caller commits, so that its
	 * outcome, a redrive or a retry racing with this transaction waits for it and then
	 * cannot put it back to pending beside the newer occurrence.
	 * @return how many pending occurrences were cancelled
	 */
	public int supersedeAlarm(String alarmName) {
		return (int) this.jdbc.sql(SUPERSEDE_ALARM_SQL)
			.param(alarmName)
			.query(String.class)
			.list()
			.stream()
			.filter("cancelled"::equals)
			.count();
	}

	/**
	 * @return the pending occurrence of an alarm, if it has one
	 */
	public Optional<EffectIntent> pendingOccurrence(String alarmName) {
		return this.jdbc
			.sql("SELECT " + COLUMNS + " FROM eec_effect_intent WHERE alarm_name = ? AND status = 'pending'")
			.param(alarmName)
			.query(IntentStore::intent)
			.optional();
	}

	/**
	 * Claims up to {@code limit} due intents for {@code owner}: one short statement that
	 * locks them with {@code SKIP LOCKED}, marks them in flight under a lease from the
	 * database clock and counts the attempt. An intent with an ordering key is due only
	 * when no earlier intent of its key is still live; a compensation only when the
	 * intent it undoes can no longer run.
	 * <p>
	 * With concurrency-limited effects, a claim shares the batch: the limited effects
	 * (each in a transaction of its own, never more than its free slots) take at most
	 * half of it, the larger half and the smaller half in turn, and the other effects the
	 * rest; whatever one side leaves unused goes to the other. So a backlog of limited
	 * intents never fills a batch while other intents are due, nor the other way round.
	 */
	public List<ClaimedIntent> claim(String owner, Duration lease, int limit) {
		return claim(owner, lease, limit, true).intents();
	}

	/**
	 * Claims as {@link #claim(String, Duration, int)} does; with concurrency-limited
	 * effects, asks for the intents of the other effects only when {@code others} says so
	 * (the limited ones may then fill the batch). Finding the others' due intents reads
	 * past every due intent of a limited effect, which a backlog of those makes costly: a
	 * drainer asks when it has reason to believe some are due (a commit, a notification,
	 * a poll, or a full batch of them last time), not every time a slot frees.
	 * @return the intents claimed, and what was learnt of the other effects' due intents
	 */
	ClaimedBatch claim(String owner, Duration lease, int limit, boolean others) {
		EffectSlots limited = this.slots;
		if (limited == null || limited.limits().isEmpty()) {
			List<ClaimedIntent> claimed = claim(owner, lease, limit, null, "");
			return new ClaimedBatch(claimed, true, claimed.size() == limit);
		}
		int share = others ? (limit + (this.turn.getAndIncrement() & 1)) / 2 : limit;
		List<ClaimedIntent> claimed = new ArrayList<>(limited.claim(this, owner, lease, share));
		boolean limitedLeft = claimed.size() == share;
		int room = limit - claimed.size();
		boolean othersAsked = others && room > 0;
		boolean othersLeft = false;
		if (othersAsked) {
			List<ClaimedIntent> other = claim(owner, lease, room, null,
					"AND i.effect_name <> ALL (" + textArray(limited.limits().keySet()) + ")");
			othersLeft = other.size() == room;
			claimed.addAll(other);
		}
		if (limitedLeft && claimed.size() < limit) {
			// the other effects left room: the limited ones may use it
			claimed.addAll(limited.claim(this, owner, lease, limit - claimed.size()));
		}
		return new ClaimedBatch(claimed, othersAsked, othersLeft);
	}

	/**
	 * What one claim took.
	 *
	 * @param intents the intents claimed
	 * @param othersAsked whether the intents of the effects without a concurrency limit
	 * were asked for
	 * @param othersLeft whether they filled the room they were given: more may be due
	 */
	record ClaimedBatch(List<ClaimedIntent> intents, boolean othersAsked, boolean othersLeft) {
	}

	/**
	 * Claims as {@link #claim(String, Duration, int)} does, only intents of the effect
	 * {@code effectName} when it is not {@code null}, whatever its concurrency limit: the
	 * caller holds the slots (or is a test's drain).
	 */
	public List<ClaimedIntent> claim(String owner, Duration lease, int limit, String effectName) {
		return claim(owner, lease, limit, effectName, "");
	}

	/**
	 * Claims up to {@code limit} due intents, of {@code effectName} only when it is not
	 * {@code null}, that {@code filter} (a condition on {@code i}, or empty) admits, in
	 * the caller's transaction if there is one.
	 */
	private List<ClaimedIntent> claim(String owner, Duration lease, int limit, String effectName, String filter) {
		JdbcClient.StatementSpec statement = this.jdbc
			.sql(claimSql(commitTimestamps(), limit, effectName != null, filter))
			.param("owner", owner)
			.param("leaseMs", lease.toMillis());
		if (effectName != null) {
			statement = statement.param("effect", effectName);
		}
		return statement.query((rs, row) -> new ClaimedIntent(rs.getLong("id"), rs.getString("effect_name"),
				rs.getString("idempotency_key"), rs.getString("payload"), rs.getInt("attempts"),
				rs.getInt("max_attempts"), Receiver.valueOf(rs.getString("receiver")),
				rs.getObject("next_attempt_at", OffsetDateTime.class), rs.getObject("created_at", OffsetDateTime.class),
				rs.getObject("lag_ms", Double.class), rs.getString("run_id"), rs.getString("trace_context")))
			.list();
	}

	/** Makes claims respect the concurrency limits of {@code slots}. */
	void useSlots(EffectSlots slots) {
		this.slots = slots;
	}

	/**
	 * The claim. The update finds the claimed rows through an array of their ids, so it
	 * reads them by primary key whatever the planner expects of the batch (joined on the
	 * CTE, a large batch or a generic plan made it hash-join a scan of the whole table).
	 * The lag of a first attempt runs from the commit that recorded the intent when the
	 * server tracks commit timestamps (read before the update replaces the row version),
	 * else from its creation. The limit is written into the statement: a drainer always
	 * claims the same number, and with it known the server can keep one plan for the
	 * prepared statement instead of planning every claim again.
	 */
	public static String claimSql(boolean commitTimestamps, int limit) {
		return claimSql(commitTimestamps, limit, false);
	}

	/**
	 * The claim, of the intents of one effect only ({@code :effect}) when
	 * {@code oneEffect}.
	 */
	public static String claimSql(boolean commitTimestamps, int limit, boolean oneEffect) {
		return claimSql(commitTimestamps, limit, oneEffect, "");
	}

	/**
	 * The claim, of the intents of one effect only ({@code :effect}) when
	 * {@code oneEffect}, and of those that {@code filter} (a condition on {@code i}, or
	 * empty) admits.
	 */
	public static String claimSql(boolean commitTimestamps, int limit, boolean oneEffect, String filter) {
		String due = commitTimestamps ? "i.id, CASE WHEN i.attempts = 0 "
				+ "THEN COALESCE(pg_xact_commit_timestamp(i.xmin), i.created_at) END AS committed_at" : "i.id";
		String rows = commitTimestamps ? "FROM due WHERE t.id = ANY (ARRAY(SELECT id FROM due)) AND t.id = due.id"
				: "WHERE t.id = ANY (ARRAY(SELECT id FROM due))";
		String committedAt = commitTimestamps ? "due.committed_at" : "CASE WHEN t.attempts = 1 THEN t.created_at END";
		return """
				WITH due AS (
				    SELECT %s
				    FROM eec_effect_intent i
				    WHERE i.status = 'pending' AND i.next_attempt_at <= ductor_now()%s
				      AND (i.ordering_key IS NULL OR NOT EXISTS (
				          SELECT 1 FROM eec_effect_intent o
				          WHERE o.ordering_key = i.ordering_key AND o.id < i.id
				            AND o.status IN (%s)))
				      AND (i.compensation_of IS NULL OR COALESCE((
				          SELECT g.status FROM eec_effect_intent g WHERE g.id = i.compensation_of), 'purged')
				          NOT IN ('pending', 'in_flight', 'reconciling', 'needs_decision'))
				      %s
				    ORDER BY i.next_attempt_at, i.id
				    LIMIT %d
				    FOR UPDATE OF i SKIP LOCKED)
				UPDATE eec_effect_intent t
				SET status = 'in_flight', attempts = t.attempts + 1, lease_owner = :owner,
				    lease_expires_at = ductor_now() + :leaseMs * interval '1 millisecond', updated_at = ductor_now(),
				    attempt_started_at = NULL
				%s
				RETURNING t.id, t.effect_name, t.idempotency_key, t.payload::text AS payload, t.attempts,
				    t.max_attempts, t.receiver, t.next_attempt_at, t.created_at, t.run_id,
				    t.trace_context::text AS trace_context,
				    (extract(epoch FROM ductor_clock() - %s) * 1000)::float8 AS lag_ms""".formatted(due,
				oneEffect ? " AND i.effect_name = :effect" : "", BLOCKING_STATUSES, filter, limit, rows, committedAt);
	}

	/**
	 * Whether the server records commit timestamps ({@code track_commit_timestamp}): then
	 * lag is measured from the commit of the transaction that recorded an intent,
	 * otherwise from its start.
	 */
	private boolean commitTimestamps() {
		Boolean enabled = this.commitTimestamps;
		if (enabled == null) {
			enabled = this.jdbc.sql("SELECT current_setting('track_commit_timestamp') = 'on'")
				.query(Boolean.class)
				.single();
			this.commitTimestamps = enabled;
		}
		return enabled;
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
			return this.template.execute((Connection connection) -> inCompletionTransaction(connection,
					() -> completeBatch(connection, owner, completions)));
		}
		catch (RuntimeException ex) {
			if (rowFault(ex) == null) {
				throw ex;
			}
		}
		return this.template.execute((Connection connection) -> inCompletionTransaction(connection, () -> {
			List<Settled> settled = new ArrayList<>();
			for (Completion completion : completions) {
				settled.addAll(eachInSavepoint(connection, () -> completeBatch(connection, owner, List.of(completion)),
						(fault) -> failInFlight(connection, completion.intentId(), owner, completion.attempt(),
								"Ductor could not record the outcome of attempt " + completion.attempt() + " ("
										+ completion.status().dbValue() + "): " + fault + ((completion.error() != null)
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
		for (int i = 0; i < n; i++) {
			Completion completion = completions.get(i);
			ids[i] = completion.intentId();
			attempts[i] = completion.attempt();
			statuses[i] = completion.status().dbValue();
			errors[i] = completion.error();
			delays[i] = (completion.retryDelay() != null) ? completion.retryDelay().toMillis() : 0L;
		}
		try (PreparedStatement statement = connection.prepareStatement(COMPLETE_SQL)) {
			statement.setArray(1, array(connection, "bigint", ids));
			statement.setArray(2, array(connection, "int", attempts));
			statement.setArray(3, array(connection, "text", statuses));
			statement.setArray(4, array(connection, "text", errors));
			statement.setArray(5, array(connection, "bigint", delays));
			statement.setString(6, owner);
			return settled(statement);
		}
	}

	/**
	 * Fails an in-flight intent whose outcome or redrive broke a constraint, with the
	 * reason; fenced by lease owner and attempt when they are given.
	 */
	private static List<Settled> failInFlight(Connection connection, long id, String owner, Integer attempt,
			String reason) throws SQLException {
		try (PreparedStatement statement = connection.prepareStatement("""
				UPDATE eec_effect_intent
				SET status = 'failed', last_error = ?, lease_owner = NULL, lease_expires_at = NULL,
				    updated_at = ductor_now(), finished_at = ductor_now()
				WHERE id = ? AND status = 'in_flight' AND (?::text IS NULL OR lease_owner = ?)
				  AND (?::int IS NULL OR attempts = ?)
				RETURNING id, status, effect_name, idempotency_key""")) {
			statement.setString(1, reason);
			statement.setLong(2, id);
			statement.setString(3, owner);
			statement.setString(4, owner);
			statement.setObject(5, attempt, Types.INTEGER);
			statement.setObject(6, attempt, Types.INTEGER);
			return settled(statement);
		}
	}

	/**
	 * Runs {@code work} in a savepoint of the connection's transaction; when it breaks a
	 * constraint (or a value is out of range), rolls back to the savepoint and runs
	 * {@code onFault} with the reason, in a savepoint of its own. A fault of
	 * {@code onFault} too leaves the row as it was.
	 */
	private static <T> List<T> eachInSavepoint(Connection connection, SqlWork<List<T>> work,
			SqlFaultWork<List<T>> onFault) throws SQLException {
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

	@FunctionalInterface
	private interface SqlFaultWork<T> {

		T run(String fault) throws SQLException;

	}

	/**
	 * Runs {@code work} in a transaction of its own with the
	 * {@link #COMPLETION_SETTINGS}.
	 */
	private static <T> T inCompletionTransaction(Connection connection, SqlWork<T> work) throws SQLException {
		return inTransaction(connection, COMPLETION_SETTINGS, work);
	}

	/**
	 * Runs {@code work} in a transaction of its own that first applies {@code settings},
	 * if any.
	 */
	private static <T> T inTransaction(Connection connection, String settings, SqlWork<T> work) throws SQLException {
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

	@FunctionalInterface
	private interface SqlWork<T> {

		T run() throws SQLException;

	}

	/**
	 * The heartbeat of one drain session, one statement per beat: it extends the leases
	 * of the attempts the session holds (ids and attempts, {@code $1} and {@code $2}),
	 * each only while that very attempt is in flight under the session's lease owner
	 * ({@code $3}) and its lease is still live by the database clock. An expired lease is
	 * never revived, even when nothing redrove it yet: the slot of a concurrency-limited
	 * effect may already serve another attempt. A row another transaction holds locked is
	 * skipped for this beat rather than waited for. It returns the attempts it extended,
	 * then every attempt asked about with whether its lease was live as the beat began (a
	 * row not extended but live was skipped because it was locked; one not live is lost).
	 * Each row is found by its primary key, one lookup per attempt held, whatever plan
	 * the server settles on: joined to the array of attempts, a generic plan looped over
	 * the whole array for every row.
	 * <p>
	 * The lease is checked against {@code ductor_clock()} once the row is locked: a claim
	 * that takes the slot of an expired holder locks that holder's row too
	 * ({@link EffectSlots}), so either the claim sees the extended lease, or the
	 * heartbeat sees the expired one after the slot was taken.
	 */
	public static final String EXTEND_LEASES_SQL = """
			WITH v AS MATERIALIZED (SELECT * FROM unnest(?::bigint[], ?::int[]) AS v(id, attempt)),
			held AS (
			    SELECT h.id FROM v CROSS JOIN LATERAL (
			        SELECT i.id FROM eec_effect_intent i
			        WHERE i.id = v.id AND i.attempts = v.attempt AND i.status = 'in_flight' AND i.lease_owner = ?
			          AND i.lease_expires_at > ductor_clock()
			        FOR NO KEY UPDATE SKIP LOCKED) h),
			extended AS (
			    UPDATE eec_effect_intent i SET lease_expires_at = ductor_now() + ? * interval '1 millisecond'
			    WHERE i.id = ANY (ARRAY(SELECT id FROM held)) AND i.status = 'in_flight'
			      AND i.lease_expires_at > ductor_clock()
			    RETURNING i.id)
			SELECT id, true AS extended, true AS live FROM extended
			UNION ALL
			SELECT v.id, false, EXISTS (
			    SELECT 1 FROM eec_effect_intent l
			    WHERE l.id = v.id AND l.attempts = v.attempt AND l.status = 'in_flight' AND l.lease_owner = ?
			      AND l.lease_expires_at > ductor_clock())
			FROM v""";

	/**
	 * Extends the leases of the attempts a drain session holds: the drainer's heartbeat.
	 * A row another transaction holds locked (a transaction that reschedules the alarm of
	 * a running occurrence, until it commits) is skipped for this beat rather than waited
	 * for, so one open transaction never holds up the leases of all the other running
	 * effects.
	 * @param owner the session's lease owner
	 * @param attempts the attempts held, by intent id
	 * @return what became of each attempt's lease
	 */
	public Map<Long, LeaseBeat> extendLeases(String owner, Duration lease, Map<Long, Integer> attempts) {
		Long[] ids = attempts.keySet().toArray(Long[]::new);
		Integer[] numbers = new Integer[ids.length];
		for (int i = 0; i < ids.length; i++) {
			numbers[i] = attempts.get(ids[i]);
		}
		Map<Long, LeaseBeat> beats = this.template.execute((Connection connection) -> {
			try (PreparedStatement statement = connection.prepareStatement(EXTEND_LEASES_SQL)) {
				statement.setArray(1, array(connection, "bigint", ids));
				statement.setArray(2, array(connection, "int", numbers));
				statement.setString(3, owner);
				statement.setLong(4, lease.toMillis());
				statement.setString(5, owner);
				Map<Long, LeaseBeat> found = new HashMap<>();
				try (ResultSet rs = statement.executeQuery()) {
					// the attempts extended, and every attempt with whether its lease was
					// live as the beat began: an attempt extended was extended
					while (rs.next()) {
						LeaseBeat beat = rs.getBoolean(2) ? LeaseBeat.EXTENDED
								: rs.getBoolean(3) ? LeaseBeat.SKIPPED : LeaseBeat.LOST;
						found.merge(rs.getLong(1), beat, (one, other) -> (one == LeaseBeat.EXTENDED) ? one : other);
					}
				}
				return found;
			}
		});
		return (beats != null) ? beats : Map.of();
	}

	/** What one beat of the heartbeat did to the lease of one attempt. */
	public enum LeaseBeat {

		/** Extended by a lease from now. */
		EXTENDED,

		/**
		 * Live but not extended: another transaction held its row locked; tried again at
		 * the next beat.
		 */
		SKIPPED,

		/**
		 * Lost: expired, or no longer this attempt in flight under this owner (completed,
		 * redriven, claimed by another drainer). Never extended again.
		 */
		LOST

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
			if (rowFault(ex) == null) {
				throw ex;
			}
		}
		Integer count = this.template.execute((Connection connection) -> inTransaction(connection, null, () -> {
			int handedBack = 0;
			for (ClaimedIntent intent : intents) {
				handedBack += eachInSavepoint(connection,
						() -> Collections.nCopies(handBackBatch(connection, owner, List.of(intent)), intent.id()),
						(fault) -> {
							failInFlight(connection, intent.id(), owner, intent.attempt(),
									"Ductor could not hand back attempt " + intent.attempt() + ", which never started: "
											+ fault);
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
			statement.setArray(1, array(connection, "bigint", ids));
			statement.setArray(2, array(connection, "int", attempts));
			statement.setString(3, owner);
			return ids(statement).size();
		}
	}

	/**
	 * Redrives in-flight intents whose lease expired: back to {@code pending}, or to
	 * {@code needs_decision} for receivers that cannot deduplicate, or to {@code failed}
	 * when the expired attempt was the last.
	 */
	List<Settled> redriveExpired(int limit, Collection<String> reconciled) {
		try {
			return this.jdbc.sql(redriveSql(reconciled)).param("limit", limit).query((rs, row) -> settled(rs)).list();
		}
		catch (RuntimeException ex) {
			if (rowFault(ex) == null) {
				throw ex;
			}
		}
		String redriveOne = REDRIVE_UPDATE_SQL.formatted("ARRAY[?]::bigint[]", textArray(reconciled));
		return rowByRow(EXPIRED_SQL.replace(":limit", "?"), new Object[] { limit }, (connection, id) -> {
			try (PreparedStatement statement = connection.prepareStatement(redriveOne)) {
				statement.setLong(1, id);
				return settled(statement);
			}
		}, (connection, id, fault) -> failInFlight(connection, id, null, null,
				"The lease of this intent expired and Ductor could not redrive it: " + fault));
	}

	/**
	 * The fallback of a batch statement that one row broke: in one transaction, selects
	 * the batch's ids again (locking them) and runs {@code each} for every id in a
	 * savepoint of its own, and {@code onFault} for a row that breaks a constraint.
	 */
	private <T> List<T> rowByRow(String selectIds, Object[] parameters, RowWork<List<T>> each,
			RowFaultWork<List<T>> onFault) {
		List<T> result = this.template.execute((Connection connection) -> inTransaction(connection, null, () -> {
			List<Long> ids = new ArrayList<>();
			try (PreparedStatement select = connection.prepareStatement(selectIds)) {
				for (int i = 0; i < parameters.length; i++) {
					select.setObject(i + 1, parameters[i]);
				}
				try (ResultSet rs = select.executeQuery()) {
					while (rs.next()) {
						ids.add(rs.getLong(1));
					}
				}
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

	@FunctionalInterface
	private interface RowWork<T> {

		T run(Connection connection, long id) throws SQLException;

	}

	@FunctionalInterface
	private interface RowFaultWork<T> {

		T run(Connection connection, long id, String fault) throws SQLException;

	}

	public Optional<EffectIntent> find(long id) {
		return this.jdbc.sql("SELECT " + COLUMNS + " FROM eec_effect_intent WHERE id = ?")
			.param(id)
			.query(IntentStore::intent)
			.optional();
	}

	public Optional<EffectIntent> findByKey(String key) {
		return this.jdbc.sql("SELECT " + COLUMNS + " FROM eec_effect_intent WHERE idempotency_key = ?")
			.param(key)
			.query(IntentStore::intent)
			.optional();
	}

	public List<EffectIntent> listByRun(String runId) {
		return this.jdbc.sql("SELECT " + COLUMNS + " FROM eec_effect_intent WHERE run_id = ? ORDER BY id")
			.param(runId)
			.query(IntentStore::intent)
			.list();
	}

	public List<EffectIntent> list(EffectStatus status, long afterId, int limit) {
		return this.jdbc
			.sql("SELECT " + COLUMNS + " FROM eec_effect_intent WHERE status = ? AND id > ? ORDER BY id LIMIT ?")
			.params(status.dbValue(), afterId, limit)
			.query(IntentStore::intent)
			.list();
	}

	/**
	 * Moves an intent from one of {@code from} to {@code to} in one conditional update.
	 * An intent moved to pending is no longer superseded: an operator chose to run it;
	 * the other live occurrences of its alarm, if it is an alarm occurrence, are
	 * superseded by it in the same statement.
	 * @return the updated intent, or empty when it was not in one of {@code from}
	 */
	public Optional<EffectIntent> transition(long id, List<EffectStatus> from, EffectStatus to, String error,
			Integer maxAttempts, OperatorDecision decision) {
		return this.jdbc
			.sql("""
					WITH moved AS (
					    UPDATE eec_effect_intent
					    SET status = :to, last_error = COALESCE(:error, last_error), updated_at = ductor_now(),
					        next_attempt_at = CASE WHEN :to = 'pending' THEN ductor_now() ELSE next_attempt_at END,
					        max_attempts = COALESCE(:maxAttempts, max_attempts), lease_owner = NULL, lease_expires_at = NULL,
					        superseded_at = CASE WHEN :to = 'pending' THEN NULL ELSE superseded_at END,
					        finished_at = CASE WHEN :to IN ('completed', 'failed', 'cancelled') THEN ductor_now() END,
					        decision_reason = CASE WHEN :decided THEN :reason ELSE decision_reason END,
					        decided_by = CASE WHEN :decided THEN :decidedBy ELSE decided_by END,
					        decided_at = CASE WHEN :decided THEN ductor_now() ELSE decided_at END
					    WHERE id = :id AND status IN (:from)
					    RETURNING\s"""
					+ COLUMNS + ")" + SUPERSEDE_OTHER_OCCURRENCES + "SELECT * FROM moved")
			.param("id", id)
			.param("to", to.dbValue())
			.param("from", from.stream().map(EffectStatus::dbValue).toList())
			.param("error", error)
			.param("maxAttempts", maxAttempts)
			.param("decided", decision != null)
			.param("reason", (decision != null) ? decision.reason() : null)
			.param("decidedBy", (decision != null) ? decision.by() : null)
			.query(IntentStore::intent)
			.optional();
	}

	/**
	 * Moves one batch of an effect's intents from {@code from} back to {@code pending},
	 * each with {@code budget} more attempts: only intents parked at or before
	 * {@code asOf} and untouched since. When one of them breaks a constraint (an alarm
	 * occurrence whose alarm has a pending occurrence), the batch is moved again intent
	 * by intent, and the offender stays parked with the reason.
	 * @return how many moved
	 */
	public int retryBatch(String effectName, EffectStatus from, int budget, int batchSize, OffsetDateTime asOf) {
		try {
			return this.jdbc.sql(RETRY_BATCH_SQL)
				.param("name", effectName)
				.param("from", from.dbValue())
				.param("asOf", asOf)
				.param("budget", budget)
				.param("batch", batchSize)
				.query(Long.class)
				.list()
				.size();
		}
		catch (RuntimeException ex) {
			if (rowFault(ex) == null) {
				throw ex;
			}
		}
		String retryOne = RETRY_UPDATE_SQL.replace(":budget", "?").formatted("ARRAY[?]::bigint[]");
		String parked = PARKED_SQL.replace(":name", "?")
			.replace(":from", "?")
			.replace(":asOf", "?")
			.replace(":batch", "?");
		return rowByRow(parked, new Object[] { effectName, from.dbValue(), asOf, batchSize }, (connection, id) -> {
			try (PreparedStatement statement = connection.prepareStatement(retryOne)) {
				statement.setInt(1, budget);
				statement.setLong(2, id);
				return ids(statement);
			}
		}, (connection, id, fault) -> {
			// stays parked, with the reason; touched now, so no later batch of this call
			// takes it again
			try (PreparedStatement statement = connection.prepareStatement("""
					UPDATE eec_effect_intent SET updated_at = ductor_now(),
					    last_error = COALESCE(last_error || '; ', '') || 'not retried in bulk: ' || ?
					WHERE id = ?""")) {
				statement.setString(1, fault);
				statement.setLong(2, id);
				statement.executeUpdate();
			}
			return List.<Long>of();
		}).size();
	}

	/**
	 * @return the current time of the database clock
	 */
	public OffsetDateTime databaseNow() {
		return this.jdbc.sql("SELECT ductor_clock()").query(OffsetDateTime.class).single();
	}

	/**
	 * Deletes one batch of completed and cancelled intents finished longer ago than
	 * {@code retention}, found by primary key ({@code IN (subquery)} became a scan of the
	 * whole table for large batches). An intent that cannot be deleted (a foreign key of
	 * the application's tables refers to it) is kept, with the reason, for another
	 * retention period, and the rest of the batch is deleted.
	 */
	public int purge(Duration retention, int batchSize) {
		try {
			return this.jdbc.sql(PURGE_SQL)
				.param("retentionMs", retention.toMillis())
				.param("batch", batchSize)
				.update();
		}
		catch (RuntimeException ex) {
			if (rowFault(ex) == null) {
				throw ex;
			}
		}
		String purgeable = PURGEABLE_SQL.replace(":retentionMs", "?").replace(":batch", "?");
		return rowByRow(purgeable, new Object[] { retention.toMillis(), batchSize }, (connection, id) -> {
			try (PreparedStatement statement = connection
				.prepareStatement("DELETE FROM eec_effect_intent WHERE id = ? RETURNING id")) {
				statement.setLong(1, id);
				return ids(statement);
			}
		}, (connection, id, fault) -> {
			try (PreparedStatement statement = connection.prepareStatement("""
					UPDATE eec_effect_intent SET finished_at = ductor_now(),
					    last_error = COALESCE(last_error || '; ', '') || 'kept by retention: ' || ?
					WHERE id = ?""")) {
				statement.setString(1, fault);
				statement.setLong(2, id);
				statement.executeUpdate();
			}
			logger.warn("Ductor's retention could not delete effect intent " + id + " and keeps it for another "
					+ "retention period: " + fault);
			return List.<Long>of();
		}).size();
	}

	private static List<Long> ids(PreparedStatement statement) throws SQLException {
		List<Long> ids = new ArrayList<>();
		try (ResultSet rs = statement.executeQuery()) {
			while (rs.next()) {
				ids.add(rs.getLong(1));
			}
		}
		return ids;
	}

	private static Array array(Connection connection, String type, Object[] values) throws SQLException {
		return connection.createArrayOf(type, values);
	}

	private static List<Settled> settled(PreparedStatement statement) throws SQLException {
		List<Settled> settled = new java.util.ArrayList<>();
		try (ResultSet rs = statement.executeQuery()) {
			while (rs.next()) {
				settled.add(settled(rs));
			}
		}
		return settled;
	}

	private static Settled settled(ResultSet rs) throws SQLException {
		return new Settled(rs.getLong("id"), EffectStatus.fromDb(rs.getString("status")), rs.getString("effect_name"),
				rs.getString("idempotency_key"));
	}

	private static EffectIntent intent(ResultSet rs, int row) throws SQLException {
		return new EffectIntent(rs.getLong("id"), rs.getString("effect_name"), rs.getString("idempotency_key"),
				EffectStatus.fromDb(rs.getString("status")), Receiver.valueOf(rs.getString("receiver")),
				rs.getInt("attempts"), rs.getInt("max_attempts"), rs.getObject("next_attempt_at", OffsetDateTime.class),
				rs.getString("lease_owner"), rs.getObject("lease_expires_at", OffsetDateTime.class),
				rs.getString("ordering_key"), rs.getString("alarm_name"), rs.getString("run_id"),
				rs.getString("last_error"), rs.getString("payload"), rs.getObject("created_at", OffsetDateTime.class),
				rs.getObject("updated_at", OffsetDateTime.class), rs.getObject("finished_at", OffsetDateTime.class),
				rs.getInt("reconcile_rounds"), rs.getString("reconcile_outcome"), rs.getString("trace_context"));
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
			    WHERE status = 'reconciling' AND next_attempt_at <= ductor_now()
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
			.query((rs, row) -> settled(rs))
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

	/**
	 * An intent to insert; {@code traceContext} is the {@code trace_context} column's
	 * JSON, or {@code null}.
	 */
	record NewIntent(String effectName, String key, String payloadJson, String fingerprint, Receiver receiver,
			int maxAttempts, Duration delay, String orderingKey, String alarmName, String runId, String traceContext) {
	}

	/**
	 * An intent this drainer claimed: what one attempt needs. {@code lagMillis} is the
	 * time from the recording commit to this claim, by the database clock, for first
	 * attempts only. {@code traceContext} is the trace context stored with the intent
	 * (JSON), or {@code null}.
	 */
	public record ClaimedIntent(long id, String effectName, String key, String payloadJson, int attempt,
			int maxAttempts, Receiver receiver, OffsetDateTime dueAt, OffsetDateTime createdAt, Double lagMillis,
			String runId, String traceContext) {
	}

	/** The outcome of one attempt, to be recorded. */
	public record Completion(long intentId, int attempt, EffectStatus status, String error, Duration retryDelay) {
	}

	/** An intent whose status a completion or redrive changed. */
	public record Settled(long id, EffectStatus status, String effectName, String key) {
	}

}
