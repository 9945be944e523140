package io.ductor.effect.internal;

import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.Collection;
import java.util.List;

import javax.sql.DataSource;

import org.springframework.jdbc.core.simple.JdbcClient;

import io.ductor.effect.Receiver;

/**
 * The claim: due intents locked with {@code SKIP LOCKED}, marked in flight under a lease
 * from the database clock and their attempt counted, in one short statement, read back as
 * {@link ClaimedIntent}s. How a drainer shares its batch between concurrency-limited
 * effects and the others is {@link ClaimPlan}'s.
 */
public final class IntentClaims {

	private final JdbcClient jdbc;

	private volatile Boolean commitTimestamps;

	public IntentClaims(DataSource dataSource) {
		this.jdbc = JdbcClient.create(dataSource);
	}

	/**
	 * Claims up to {@code limit} due intents for {@code owner}, of any effect, whatever
	 * its concurrency limit. An intent with an ordering key is due only when no earlier
	 * intent of its key is still live; a compensation only when the intent it undoes can
	 * no longer run.
	 */
	public List<ClaimedIntent> claim(String owner, Duration lease, int limit) {
		return claim(owner, lease, limit, null, "");
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
	 * Claims as {@link #claim(String, Duration, int)} does, only intents of the effects
	 * that {@code excluded} does not name.
	 */
	List<ClaimedIntent> claimExcept(String owner, Duration lease, int limit, Collection<String> excluded) {
		return claim(owner, lease, limit, null, "AND i.effect_name <> ALL (" + textArray(excluded) + ")");
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

	/**
	 * The claim, of the intents of one effect only ({@code :effect}) when
	 * {@code oneEffect}, and of those that {@code filter} (a condition on {@code i}, or
	 * empty) admits. The update finds the claimed rows through an array of their ids, so
	 * it reads them by primary key whatever the planner expects of the batch (joined on
	 * the CTE, a large batch or a generic plan made it hash-join a scan of the whole
	 * table). The lag of a first attempt runs from the commit that recorded the intent
	 * when the server tracks commit timestamps (read before the update replaces the row
	 * version), else from its creation. The limit is written into the statement: a
	 * drainer always claims the same number, and with it known the server can keep one
	 * plan for the prepared statement instead of planning every claim again.
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
				    WHERE i.queue_status = 'pending' AND i.next_attempt_at <= ductor_now()%s
				      AND (i.ordering_key IS NULL OR NOT EXISTS (
				          SELECT 1 FROM eec_effect_intent o
				          WHERE o.ordering_key = i.ordering_key AND o.id < i.id
				            AND o.queue_status IN %s))
				      AND (i.compensation_of IS NULL OR COALESCE((
				          SELECT g.status FROM eec_effect_intent g WHERE g.id = i.compensation_of), 'purged')
				          NOT IN %s)
				      %s
				    ORDER BY i.next_attempt_at, i.id
				    LIMIT %d
				    FOR UPDATE OF i SKIP LOCKED)
				UPDATE eec_effect_intent t
				SET status = 'in_flight', attempts = t.attempts + 1, lease_owner = :owner,
				    lease_expires_at = ductor_now() + :leaseMs * interval '1 millisecond', updated_at = ductor_now(),
				    attempt_started_at = NULL, lease_swept = true, lease_xid = txid_current()
				%s
				RETURNING t.id, t.effect_name, t.idempotency_key, t.payload::text AS payload, t.attempts,
				    t.max_attempts, t.receiver, t.next_attempt_at, t.created_at, t.run_id,
				    t.trace_context::text AS trace_context,
				    (extract(epoch FROM ductor_clock() - %s) * 1000)::float8 AS lag_ms""".formatted(due,
				oneEffect ? " AND i.effect_name = :effect" : "", IntentStatuses.LIVE_SQL,
				IntentStatuses.MAY_STILL_RUN_SQL, filter, limit, rows, committedAt);
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
	 * A literal {@code text[]} of fixed names (effect names, known at start-up): one plan
	 * whatever the round.
	 */
	static String textArray(Collection<String> values) {
		return "ARRAY["
				+ String.join(", ", values.stream().map((value) -> "'" + value.replace("'", "''") + "'").toList())
				+ "]::text[]";
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

}
