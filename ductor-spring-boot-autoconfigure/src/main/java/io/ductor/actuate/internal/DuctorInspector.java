package io.ductor.actuate.internal;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import javax.sql.DataSource;

import org.springframework.jdbc.core.simple.JdbcClient;

import io.ductor.effect.EffectIntent;
import io.ductor.effect.EffectStatus;
import io.ductor.effect.internal.EffectSlots;
import io.ductor.effect.internal.IntentReads;
import io.ductor.effect.internal.IntentStatuses;
import io.ductor.internal.DbValues;
import io.ductor.internal.InFlightIntents;

/**
 * The read-only queries behind the operator console, all in one place: intents by any
 * combination of filters with keyset paging (never {@code OFFSET}), one intent with
 * everything stored about it, runs and their history, idempotency keys, recurring and
 * named alarms by name, the holders of concurrency slots, and the figures of the
 * overview. Every query reads an index: the primary key, the unique key, the run index,
 * the partial indexes of the live statuses ({@code eec_effect_intent_live_id_idx} for
 * every live status but {@code in_flight}, the parked and lease indexes, the sweep's
 * index of the leases past its watermark), the table of completions per minute, or the
 * alarm indexes ({@code eec_effect_intent_alarm_name_idx} of every occurrence of a named
 * alarm, {@code eec_effect_intent_alarm_idx} of the pending ones). A creation-time window
 * is turned into a range of ids first, by probes of the primary key.
 */
public class DuctorInspector {

	/** The most rows one page holds. */
	public static final int MAX_PAGE = 500;

	/** How many bytes of a stored response body a key lookup shows. */
	static final int BODY_PREVIEW = 2000;

	private static final String COLUMNS = """
			id, effect_name, idempotency_key, status, receiver, attempts, max_attempts, next_attempt_at,
			lease_owner, lease_expires_at, ordering_key, alarm_name, run_id, last_error, payload::text AS payload,
			created_at, updated_at, finished_at, reconcile_rounds, reconcile_outcome,
			trace_context::text AS trace_context""";

	/**
	 * How much earlier than its id's neighbours an intent may have been created: its
	 * creation time is the start of the transaction that recorded it, and its id is taken
	 * when it is recorded.
	 */
	static final Duration CREATION_SKEW = Duration.ofMinutes(1);

	/**
	 * The first id whose intent was created at or after {@code :at}, or the next id to
	 * come: a binary search over the primary key (about twenty index probes at a million
	 * intents) that relies on ids and creation times rising together, as the database
	 * writes them ({@code created_at} defaults to {@code ductor_now()} and the id to its
	 * sequence). It needs no index on {@code created_at}, which every non-HOT update of
	 * an intent (each claim and completion) would have to write.
	 */
	private static final String FIRST_ID_CREATED_AT_OR_AFTER = """
			WITH RECURSIVE s(lo, hi) AS (
			    SELECT coalesce(min(id), 1), coalesce(max(id), 0) + 1 FROM eec_effect_intent
			    UNION ALL
			    SELECT CASE WHEN p.created_at < :at THEN p.id + 1 ELSE s.lo END,
			           CASE WHEN p.created_at < :at THEN s.hi ELSE (s.lo + s.hi) / 2 END
			    FROM s CROSS JOIN LATERAL (
			        SELECT id, created_at FROM eec_effect_intent WHERE id >= (s.lo + s.hi) / 2 ORDER BY id LIMIT 1) AS p
			    WHERE s.lo < s.hi)
			SELECT max(lo) FROM s""";

	/**
	 * A recurring alarm with the intent of its last occurrence, found by its key; the
	 * caller adds the condition.
	 */
	private static final String RECURRING_ALARMS = """
			SELECT a.name, a.effect_name, a.cron, a.every_ms, a.zone, a.missed, a.grace_ms, a.declared_in, a.paused,
			       a.next_at, a.last_occurrence_at, a.last_key, i.id AS last_id, i.status AS last_status,
			       a.decision_reason, a.decided_by, a.decided_at
			FROM eec_recurring_alarm a LEFT JOIN eec_effect_intent i ON i.idempotency_key = a.last_key
			""";

	/**
	 * A page of named alarms: the next {@code :limit} names after {@code :after} that
	 * start with {@code :prefix}, one probe of {@code eec_effect_intent_alarm_name_idx}
	 * each, with each name's pending occurrence and its newest other one.
	 */
	static final String ONE_SHOT_ALARMS = """
			WITH RECURSIVE names(name) AS (
			    (SELECT alarm_name FROM eec_effect_intent
			     WHERE alarm_name IS NOT NULL AND alarm_name > :after AND alarm_name >= :prefix
			     ORDER BY alarm_name LIMIT 1)
			    UNION ALL
			    SELECT (SELECT i.alarm_name FROM eec_effect_intent i
			            WHERE i.alarm_name IS NOT NULL AND i.alarm_name > n.name ORDER BY i.alarm_name LIMIT 1)
			    FROM names n WHERE starts_with(n.name, :prefix))
			SELECT n.name, nx.id AS next_id, nx.idempotency_key AS next_key, nx.next_attempt_at AS next_at,
			       l.id AS last_id, l.idempotency_key AS last_key, l.status AS last_status,
			       COALESCE(l.finished_at, l.updated_at) AS last_at, l.last_error,
			       COALESCE(nx.effect_name, l.effect_name) AS effect_name
			FROM (SELECT name FROM names WHERE name IS NOT NULL AND starts_with(name, :prefix) LIMIT :limit) n
			LEFT JOIN LATERAL (
			    SELECT id, idempotency_key, next_attempt_at, effect_name FROM eec_effect_intent
			    WHERE alarm_name = n.name AND queue_status = 'pending') nx ON true
			LEFT JOIN LATERAL (
			    SELECT id, idempotency_key, status, finished_at, updated_at, last_error, effect_name FROM eec_effect_intent
			    WHERE alarm_name = n.name AND alarm_name IS NOT NULL AND status <> 'pending'
			    ORDER BY id DESC LIMIT 1) l ON true
			ORDER BY n.name""";

	private final JdbcClient jdbc;

	public DuctorInspector(DataSource dataSource) {
		this.jdbc = JdbcClient.create(dataSource);
	}

	/**
	 * A page of intents, by id ascending.
	 * @param filter which intents
	 * @param afterId the last id of the previous page, 0 for the first
	 * @param limit the page size, 1 to {@value #MAX_PAGE}
	 * @return the page
	 */
	public List<EffectIntent> search(IntentFilter filter, long afterId, int limit) {
		if (limit < 1 || limit > MAX_PAGE) {
			throw new IllegalArgumentException("limit must be between 1 and " + MAX_PAGE + " but was " + limit);
		}
		StringBuilder sql = new StringBuilder("SELECT ").append(COLUMNS)
			.append(" FROM eec_effect_intent WHERE id > :after");
		Map<String, Object> params = new LinkedHashMap<>();
		params.put("after", afterId);
		if (filter.status() != null) {
			sql.append(" AND status = :status");
			params.put("status", DbValues.of(filter.status()));
			if (filter.status() == EffectStatus.IN_FLIGHT) {
				// through the lease index and the sweep's index
				sql.append(" AND ").append(InFlightIntents.inFlight(sweepWatermark()));
			}
			else if (isLive(filter.status())) {
				// the literal list (the index's predicate) lets even a generic plan read
				// the live index
				sql.append(" AND queue_status = :status AND queue_status IN ").append(IntentStatuses.WAITING_SQL);
			}
		}
		condition(sql, params, "effect_name", "effect", filter.effect());
		condition(sql, params, "idempotency_key", "key", filter.key());
		condition(sql, params, "run_id", "run", filter.runId());
		if (filter.createdFrom() != null) {
			// ids are taken in creation order: the window's first id bounds the walk from
			// below, and
			// the first id after it (below) from above, so a narrow window far back reads
			// only itself
			long first = firstIdCreatedAtOrAfter(filter.createdFrom().minus(CREATION_SKEW));
			params.put("after", Math.max(afterId, first - 1));
			sql.append(" AND created_at >= :from");
			params.put("from", filter.createdFrom());
		}
		if (filter.createdTo() != null) {
			sql.append(" AND id < :before AND created_at < :to");
			params.put("before", firstIdCreatedAtOrAfter(filter.createdTo().plus(CREATION_SKEW)));
			params.put("to", filter.createdTo());
		}
		params.put("limit", limit);
		sql.append(" ORDER BY id LIMIT :limit");
		return this.jdbc.sql(sql.toString()).params(params).query(IntentReads::intent).list();
	}

	/**
	 * Everything stored about one intent besides its {@link EffectIntent} fields: the
	 * operator's decision, the attempt start, supersession, what it compensates, the id
	 * of the trace it was recorded in (from its stored {@code traceparent}) and the
	 * receipt of its completed attempt (what a messaging relay's broker acknowledged).
	 * @param id the intent
	 * @return the fields by name, empty when no intent has this id
	 */
	public Optional<Map<String, Object>> details(long id) {
		return this.jdbc.sql("""
				SELECT decision_reason, decided_by, decided_at, attempt_started_at, superseded_at, compensation_of,
				    split_part(trace_context ->> 'traceparent', '-', 2) AS trace_id, receipt
				FROM eec_effect_intent WHERE id = ?""").param(id).query((rs, row) -> {
			Map<String, Object> details = new LinkedHashMap<>();
			details.put("decisionReason", rs.getString("decision_reason"));
			details.put("decidedBy", rs.getString("decided_by"));
			details.put("decidedAt", rs.getObject("decided_at", OffsetDateTime.class));
			details.put("attemptStartedAt", rs.getObject("attempt_started_at", OffsetDateTime.class));
			details.put("supersededAt", rs.getObject("superseded_at", OffsetDateTime.class));
			details.put("compensationOf", rs.getObject("compensation_of", Long.class));
			String traceId = rs.getString("trace_id");
			details.put("traceId", (traceId == null || traceId.isEmpty()) ? null : traceId);
			details.put("receipt", rs.getString("receipt"));
			return details;
		}).optional();
	}

	/**
	 * @param id an intent @return the intent, if it exists
	 */
	public Optional<EffectIntent> intent(long id) {
		return this.jdbc.sql("SELECT " + COLUMNS + " FROM eec_effect_intent WHERE id = ?")
			.param(id)
			.query(IntentReads::intent)
			.optional();
	}

	/**
	 * A run with its history and the intents its ticks recorded (at most
	 * {@value #MAX_PAGE} of each).
	 * @param runId the run
	 * @return the run, empty when no run has this id
	 */
	public Optional<Map<String, Object>> run(String runId) {
		Optional<Map<String, Object>> run = this.jdbc.sql("""
				SELECT id, type, status, compensation, state::text AS state, record_version, last_transition_seq,
				       failure_reason, created_at, updated_at, ended_at
				FROM eec_run WHERE id = ?""").param(runId).query((rs, row) -> runRow(rs)).optional();
		run.ifPresent((found) -> {
			found.put("transitions",
					this.jdbc.sql("""
							SELECT seq, stamp, input::text AS input, record_version, run_status, created_at
							FROM eec_run_transition WHERE run_id = ? ORDER BY seq LIMIT ?""")
						.params(runId, MAX_PAGE)
						.query((rs, row) -> {
							Map<String, Object> transition = new LinkedHashMap<>();
							transition.put("seq", rs.getLong("seq"));
							transition.put("stamp", rs.getString("stamp"));
							transition.put("input", rs.getString("input"));
							transition.put("recordVersion", rs.getLong("record_version"));
							transition.put("runStatus", rs.getString("run_status"));
							transition.put("createdAt", rs.getObject("created_at", OffsetDateTime.class));
							return transition;
						})
						.list());
			found.put("effects", search(new IntentFilter(null, null, null, runId, null, null), 0, MAX_PAGE));
		});
		return run;
	}

	/**
	 * Runs of one type, by id.
	 * @param type the run type
	 * @param status {@code active}, {@code completed}, {@code failed}, or {@code null}
	 * for all
	 * @param afterId the last id of the previous page, {@code ""} for the first
	 * @param limit the page size
	 * @return the page, without state and history
	 */
	public List<Map<String, Object>> runs(String type, String status, String afterId, int limit) {
		if (limit < 1 || limit > MAX_PAGE) {
			throw new IllegalArgumentException("limit must be between 1 and " + MAX_PAGE + " but was " + limit);
		}
		return this.jdbc.sql("""
				SELECT id, type, status, compensation, NULL AS state, record_version, last_transition_seq,
				       failure_reason, created_at, updated_at, ended_at
				FROM eec_run WHERE type = :type AND id > :after AND (CAST(:status AS text) IS NULL OR status = :status)
				ORDER BY id LIMIT :limit""")
			.param("type", type)
			.param("after", afterId)
			.param("status", status)
			.param("limit", limit)
			.query((rs, row) -> runRow(rs))
			.list();
	}

	/**
	 * An idempotency key's record.
	 * @param tenant the tenant scope
	 * @param pool the pool
	 * @param key the key
	 * @return its status, decision, expiry and a summary of the stored response: status,
	 * headers, content type, body size and the body's first {@value #BODY_PREVIEW} bytes,
	 * as text when they are UTF-8 and the body has no content encoding, else as base64
	 * (see {@link BodyPreview}); empty when no record has this key
	 */
	public Optional<Map<String, Object>> key(String tenant, String pool, String key) {
		return this.jdbc.sql("""
				SELECT tenant_scope, pool_id, idempotency_key, status, decision_id, response_status,
				       response_headers::text AS headers, response_headers -> 'Content-Type' ->> 0 AS content_type,
				       response_headers -> 'Content-Encoding' ->> 0 AS content_encoding,
				       octet_length(response_body) AS body_size, substring(response_body FROM 1 FOR ?) AS body_start,
				       has_waiters, expires_at, expires_at <= ductor_now() AS expired, created_at, updated_at
				FROM eec_routing_idempotency WHERE tenant_scope = ? AND pool_id = ? AND idempotency_key = ?""")
			.params(BODY_PREVIEW, tenant, pool, key)
			.query((rs, row) -> {
				Map<String, Object> found = new LinkedHashMap<>();
				found.put("tenant", rs.getString("tenant_scope"));
				found.put("pool", rs.getString("pool_id"));
				found.put("key", rs.getString("idempotency_key"));
				found.put("status", rs.getString("status"));
				found.put("decisionId", rs.getString("decision_id"));
				found.put("responseStatus", rs.getObject("response_status", Integer.class));
				found.put("responseHeaders", rs.getString("headers"));
				found.put("responseContentType", rs.getString("content_type"));
				Integer size = rs.getObject("body_size", Integer.class);
				found.put("responseBodySize", size);
				BodyPreview preview = (size != null)
						? BodyPreview.of(rs.getBytes("body_start"), size, rs.getString("content_encoding")) : null;
				found.put("responseBodyStart", (preview != null) ? preview.start() : null);
				found.put("responseBodyEncoding", (preview != null) ? preview.encoding() : null);
				found.put("responseBodyTruncated", preview != null && preview.truncated());
				found.put("hasWaiters", rs.getBoolean("has_waiters"));
				found.put("expiresAt", rs.getObject("expires_at", OffsetDateTime.class));
				found.put("expired", rs.getBoolean("expired"));
				found.put("createdAt", rs.getObject("created_at", OffsetDateTime.class));
				found.put("updatedAt", rs.getObject("updated_at", OffsetDateTime.class));
				return found;
			})
			.optional();
	}

	/**
	 * @return failed and undecided intents counted per effect and status, through the
	 * parked index
	 */
	public List<Map<String, Object>> parkedByEffect() {
		return this.jdbc.sql("""
				SELECT effect_name, queue_status AS status, count(*) AS intents FROM eec_effect_intent
				WHERE queue_status IN %s GROUP BY effect_name, queue_status
				ORDER BY effect_name, queue_status""".formatted(IntentStatuses.PARKED_SQL)).query((rs, row) -> {
			Map<String, Object> count = new LinkedHashMap<>();
			count.put("effect", rs.getString("effect_name"));
			count.put("status", rs.getString("status"));
			count.put("intents", rs.getLong("intents"));
			return count;
		}).list();
	}

	/**
	 * Completions per minute over the last minutes, with the mean and largest dispatch
	 * lag (from the time an intent was due to its completion), as the drainers'
	 * completions counted them ({@code eec_effect_throughput}).
	 * @param window how far back, at most an hour
	 * @return one entry per minute that completed something, oldest first
	 */
	public List<Map<String, Object>> throughput(Duration window) {
		return this.jdbc.sql("""
				SELECT minute, completed, lag_ms_sum / completed AS mean_lag_ms, lag_ms_max AS max_lag_ms
				FROM eec_effect_throughput
				WHERE minute >= date_trunc('minute', ductor_now()) - :seconds * interval '1 second'
				ORDER BY minute""").param("seconds", Math.min(window.toSeconds(), 3600)).query((rs, row) -> {
			Map<String, Object> minute = new LinkedHashMap<>();
			minute.put("minute", rs.getObject("minute", OffsetDateTime.class));
			minute.put("completed", rs.getLong("completed"));
			minute.put("meanLagMs", Math.max(0, Math.round(rs.getDouble("mean_lag_ms"))));
			minute.put("maxLagMs", Math.max(0, Math.round(rs.getDouble("max_lag_ms"))));
			return minute;
		}).list();
	}

	/**
	 * The sweep's watermark, read first and written into a statement
	 * ({@link InFlightIntents#inFlight(long)}).
	 */
	private long sweepWatermark() {
		return this.jdbc.sql(InFlightIntents.SWEEP_WATERMARK_SQL).query(Long.class).optional().orElse(0L);
	}

	/**
	 * @return per lease owner (drainer instance): intents in flight and its latest lease
	 * expiry
	 */
	public List<Map<String, Object>> leaseOwners() {
		return this.jdbc.sql("""
				SELECT lease_owner, count(*) AS in_flight, max(lease_expires_at) AS lease_until,
				       max(lease_expires_at) < ductor_now() AS expired
				FROM eec_effect_intent WHERE %s
				GROUP BY lease_owner ORDER BY lease_owner""".formatted(InFlightIntents.inFlight(sweepWatermark())))
			.query((rs, row) -> {
				Map<String, Object> owner = new LinkedHashMap<>();
				owner.put("owner", rs.getString("lease_owner"));
				owner.put("inFlight", rs.getLong("in_flight"));
				owner.put("leaseUntil", rs.getObject("lease_until", OffsetDateTime.class));
				owner.put("expired", rs.getBoolean("expired"));
				return owner;
			})
			.list();
	}

	/**
	 * Recurring alarms by name, each with the intent of its last occurrence (found by its
	 * key) and the operator's last pause or resume.
	 * @param afterName the last name of the previous page, {@code ""} for the first
	 * @param prefix what the names start with, {@code ""} for every alarm
	 * @param limit the page size
	 * @return the page: schedule, {@code paused}, {@code nextAt}, the last occurrence
	 * ({@code lastOccurrenceAt}, {@code lastKey}, {@code lastIntentId},
	 * {@code lastOutcome}: its status, or {@code purged} when retention deleted it) and
	 * the decision ({@code decisionReason}, {@code decidedBy}, {@code decidedAt})
	 */
	public List<Map<String, Object>> recurringAlarms(String afterName, String prefix, int limit) {
		requirePage(limit);
		return this.jdbc.sql(RECURRING_ALARMS + """
				WHERE a.name > :after AND a.name >= :prefix AND starts_with(a.name, :prefix)
				ORDER BY a.name LIMIT :limit""")
			.param("after", afterName)
			.param("prefix", prefix)
			.param("limit", limit)
			.query((rs, row) -> recurringAlarm(rs))
			.list();
	}

	/**
	 * @param name a recurring alarm @return it, as {@link #recurringAlarms} shows it, if
	 * it exists
	 */
	public Optional<Map<String, Object>> recurringAlarm(String name) {
		return this.jdbc.sql(RECURRING_ALARMS + " WHERE a.name = :name")
			.param("name", name)
			.query((rs, row) -> recurringAlarm(rs))
			.optional();
	}

	/**
	 * Named (one-shot) alarms by name, the names of the intents scheduled with
	 * {@code EffectOutbox.scheduleAlarm}: each name is found by one probe of
	 * {@code eec_effect_intent_alarm_name_idx} past the previous one, so a page reads
	 * {@code limit} names however many occurrences each has, then its pending occurrence
	 * (at most one) and its newest other one.
	 * @param afterName the last name of the previous page, {@code ""} for the first
	 * @param prefix what the names start with, {@code ""} for every alarm
	 * @param limit the page size
	 * @return the page: {@code name}, {@code effect}, the pending occurrence
	 * ({@code nextIntentId}, {@code nextKey}, {@code nextAt}, or {@code null}s) and the
	 * newest other occurrence ({@code lastIntentId}, {@code lastKey}, {@code lastStatus},
	 * {@code lastAt}: when it finished or last changed, {@code lastError})
	 */
	public List<Map<String, Object>> oneShotAlarms(String afterName, String prefix, int limit) {
		requirePage(limit);
		return this.jdbc.sql(ONE_SHOT_ALARMS)
			.param("after", afterName)
			.param("prefix", prefix)
			.param("limit", limit)
			.query((rs, row) -> {
				Map<String, Object> alarm = new LinkedHashMap<>();
				alarm.put("name", rs.getString("name"));
				alarm.put("effect", rs.getString("effect_name"));
				alarm.put("nextIntentId", rs.getObject("next_id", Long.class));
				alarm.put("nextKey", rs.getString("next_key"));
				alarm.put("nextAt", rs.getObject("next_at", OffsetDateTime.class));
				alarm.put("lastIntentId", rs.getObject("last_id", Long.class));
				alarm.put("lastKey", rs.getString("last_key"));
				alarm.put("lastStatus", rs.getString("last_status"));
				alarm.put("lastAt", rs.getObject("last_at", OffsetDateTime.class));
				alarm.put("lastError", rs.getString("last_error"));
				return alarm;
			})
			.list();
	}

	/**
	 * The holders of the concurrency slots of the limited effects: per slot held by an
	 * attempt in flight under a live lease (what {@code EffectSlots} counts as in use),
	 * the intent, its attempt, its lease and when the attempt started. Each holder is
	 * found by its primary key (joined instead, the plan read every live lease).
	 * @param effects the limited effects
	 * @return the holders, by effect and slot
	 */
	public List<Map<String, Object>> slotHolders(Collection<String> effects) {
		if (effects.isEmpty()) {
			return List.of();
		}
		return this.jdbc
			.sql("""
					SELECT s.effect_name, s.slot, h.id, h.idempotency_key, h.attempts, h.lease_owner, h.lease_expires_at,
					       h.attempt_started_at
					FROM eec_effect_slot s CROSS JOIN LATERAL (
					    SELECT h.id, h.idempotency_key, h.attempts, h.lease_owner, h.lease_expires_at, h.attempt_started_at
					    FROM eec_effect_intent h
					    WHERE %s
					    LIMIT 1) h
					WHERE s.effect_name = ANY (:effects) ORDER BY s.effect_name, s.slot"""
				.formatted(EffectSlots.LIVE_HOLDER))
			.param("effects", effects.toArray(String[]::new))
			.query((rs, row) -> {
				Map<String, Object> holder = new LinkedHashMap<>();
				holder.put("effect", rs.getString("effect_name"));
				holder.put("slot", rs.getInt("slot"));
				holder.put("intentId", rs.getLong("id"));
				holder.put("key", rs.getString("idempotency_key"));
				holder.put("attempt", rs.getInt("attempts"));
				holder.put("leaseOwner", rs.getString("lease_owner"));
				holder.put("leaseExpiresAt", rs.getObject("lease_expires_at", OffsetDateTime.class));
				holder.put("attemptStartedAt", rs.getObject("attempt_started_at", OffsetDateTime.class));
				return holder;
			})
			.list();
	}

	/**
	 * The ids a bulk action visits next: intents of one effect in one parked status that
	 * were parked at or before {@code asOf}, after {@code afterId}, by id.
	 */
	List<Long> snapshotPage(String effect, EffectStatus status, OffsetDateTime asOf, long afterId, int limit) {
		return this.jdbc.sql("""
				SELECT id FROM eec_effect_intent
				WHERE effect_name = :effect AND queue_status = :status
				  AND queue_status IN %s
				  AND updated_at <= :asOf AND id > :after
				ORDER BY id LIMIT :limit""".formatted(IntentStatuses.WAITING_SQL))
			.param("effect", effect)
			.param("status", DbValues.of(status))
			.param("asOf", asOf)
			.param("after", afterId)
			.param("limit", limit)
			.query(Long.class)
			.list();
	}

	/**
	 * @param at a creation time
	 * @return the first id created at or after it (ids of intents created before it are
	 * lower), or the next id to come when none was
	 */
	long firstIdCreatedAtOrAfter(OffsetDateTime at) {
		return this.jdbc.sql(FIRST_ID_CREATED_AT_OR_AFTER).param("at", at).query(Long.class).single();
	}

	/**
	 * @return the database clock
	 */
	OffsetDateTime databaseNow() {
		return this.jdbc.sql("SELECT ductor_now()").query(OffsetDateTime.class).single();
	}

	private static void requirePage(int limit) {
		if (limit < 1 || limit > MAX_PAGE) {
			throw new IllegalArgumentException("limit must be between 1 and " + MAX_PAGE + " but was " + limit);
		}
	}

	private static Map<String, Object> recurringAlarm(ResultSet rs) throws SQLException {
		Map<String, Object> alarm = new LinkedHashMap<>();
		alarm.put("name", rs.getString("name"));
		alarm.put("effect", rs.getString("effect_name"));
		String cron = rs.getString("cron");
		if (cron != null) {
			alarm.put("cron", cron);
			alarm.put("zone", rs.getString("zone"));
		}
		else {
			alarm.put("every", Duration.ofMillis(rs.getLong("every_ms")).toString());
		}
		alarm.put("missed", rs.getString("missed"));
		alarm.put("grace", Duration.ofMillis(rs.getLong("grace_ms")).toString());
		alarm.put("declaredIn", rs.getString("declared_in"));
		alarm.put("paused", rs.getBoolean("paused"));
		alarm.put("nextAt", rs.getObject("next_at", OffsetDateTime.class));
		alarm.put("lastOccurrenceAt", rs.getObject("last_occurrence_at", OffsetDateTime.class));
		String lastKey = rs.getString("last_key");
		alarm.put("lastKey", lastKey);
		alarm.put("lastIntentId", rs.getObject("last_id", Long.class));
		String status = rs.getString("last_status");
		alarm.put("lastOutcome", (status != null) ? status : (lastKey != null) ? "purged" : null);
		alarm.put("decisionReason", rs.getString("decision_reason"));
		alarm.put("decidedBy", rs.getString("decided_by"));
		alarm.put("decidedAt", rs.getObject("decided_at", OffsetDateTime.class));
		return alarm;
	}

	private static boolean isLive(EffectStatus status) {
		return IntentStatuses.LIVE.contains(status);
	}

	private static void condition(StringBuilder sql, Map<String, Object> params, String column, String name,
			String value) {
		if (value != null && !value.isEmpty()) {
			sql.append(" AND ").append(column).append(" = :").append(name);
			params.put(name, value);
		}
	}

	private static Map<String, Object> runRow(ResultSet rs) throws SQLException {
		Map<String, Object> run = new LinkedHashMap<>();
		run.put("id", rs.getString("id"));
		run.put("type", rs.getString("type"));
		run.put("status", rs.getString("status"));
		run.put("compensation", rs.getString("compensation"));
		run.put("state", rs.getString("state"));
		run.put("recordVersion", rs.getLong("record_version"));
		run.put("lastTransitionSeq", rs.getLong("last_transition_seq"));
		run.put("failureReason", rs.getString("failure_reason"));
		run.put("createdAt", rs.getObject("created_at", OffsetDateTime.class));
		run.put("updatedAt", rs.getObject("updated_at", OffsetDateTime.class));
		run.put("endedAt", rs.getObject("ended_at", OffsetDateTime.class));
		return run;
	}

}
