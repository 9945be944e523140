package io.ductor.idempotency;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;

import org.springframework.jdbc.core.simple.JdbcClient;

/**
 * The SQL behind ingress idempotency: {@code eec_routing_idempotency}. Every time is the
 * database's {@code now()}; every statement is a single short one.
 */
class IdempotencyStore {

	/**
	 * Counts the settled rows and, in the settling statement, notifies {@link IdempotencyService#CHANNEL}
	 * with the key of each one a duplicate is waiting for. Without waiters there is no notification:
	 * PostgreSQL serializes the commits of notifying transactions.
	 */
	private static final String NOTIFY_SETTLED = """
			SELECT count(*) + coalesce(sum(CASE WHEN has_waiters THEN length(pg_notify('%s',
			           tenant_scope || chr(31) || pool_id || chr(31) || idempotency_key)::text) END), 0)
			FROM settled""".formatted(IdempotencyService.CHANNEL);

	private static final String KEY_MATCHES = "tenant_scope = :scope AND pool_id = :pool AND idempotency_key = :key";

	private final JdbcClient jdbc;

	IdempotencyStore(JdbcClient jdbc) {
		this.jdbc = jdbc;
	}

	/**
	 * Insert a pending reservation, or take over a released one or a completed one past its TTL,
	 * in one statement.
	 * @return whether {@code token} owns the key now
	 */
	boolean reserve(IdempotentRequest request, UUID token, Duration pendingTtl) {
		return this.jdbc.sql("""
				INSERT INTO eec_routing_idempotency AS r
				    (tenant_scope, pool_id, idempotency_key, status, request_fingerprint, owner_token, expires_at)
				VALUES (:scope, :pool, :key, 'pending', :fingerprint, :token, now() + :ttl * interval '1 microsecond')
				ON CONFLICT (tenant_scope, pool_id, idempotency_key) DO UPDATE
				SET status = 'pending', request_fingerprint = excluded.request_fingerprint,
				    owner_token = excluded.owner_token, decision_id = NULL, response_status = NULL,
				    response_headers = NULL, response_body = NULL, expires_at = excluded.expires_at,
				    has_waiters = false, created_at = now(), updated_at = now()
				WHERE r.status = 'failed_before_commit' OR (r.status = 'completed' AND r.expires_at <= now())
				RETURNING r.owner_token""")
			.params(keyParams(request))
			.param("fingerprint", request.fingerprint())
			.param("token", token)
			.param("ttl", micros(pendingTtl))
			.query(UUID.class)
			.optional()
			.isPresent();
	}

	/** Marks the key's pending reservation as awaited, so settling it notifies. */
	void markWaited(IdempotentRequest request) {
		this.jdbc.sql("UPDATE eec_routing_idempotency SET has_waiters = true WHERE " + KEY_MATCHES
				+ " AND status = 'pending' AND NOT has_waiters")
			.params(keyParams(request))
			.update();
	}

	/** @return the key's row as it is now, if there is one */
	Optional<Row> find(IdempotentRequest request) {
		return this.jdbc.sql("""
				SELECT status, request_fingerprint, decision_id, response_status, response_headers::text AS headers,
				       response_body, updated_at, expires_at, expires_at <= now() AS expired
				FROM eec_routing_idempotency WHERE\s""" + KEY_MATCHES)
			.params(keyParams(request))
			.query(IdempotencyStore::mapRow)
			.optional();
	}

	/**
	 * Complete the reservation held by {@code token}, unless someone else reclaimed the key.
	 * @return 1 when completed, 0 when the token no longer owns an unsettled row
	 */
	int complete(Reservation reservation, String decisionId, StoredResponse response, String headersJson,
			Duration completedTtl) {
		return this.jdbc.sql("""
				WITH settled AS (
				    UPDATE eec_routing_idempotency
				    SET status = 'completed', decision_id = :decision, response_status = :status,
				        response_headers = :headers::jsonb, response_body = :body,
				        expires_at = now() + :ttl * interval '1 microsecond', updated_at = now()
				    WHERE %s AND owner_token = :token AND status IN ('pending', 'failed_before_commit')
				    RETURNING tenant_scope, pool_id, idempotency_key, has_waiters)
				""".formatted(KEY_MATCHES) + NOTIFY_SETTLED)
			.params(keyParams(reservation.request()))
			.param("token", reservation.ownerToken())
			.param("decision", decisionId)
			.param("status", (response != null) ? response.status() : null)
			.param("headers", headersJson)
			.param("body", (response != null) ? response.body() : null)
			.param("ttl", micros(completedTtl))
			.query(Integer.class)
			.single();
	}

	/** @return 1 when the pending reservation held by {@code token} was released, else 0 */
	int fail(Reservation reservation) {
		return this.jdbc.sql(release(KEY_MATCHES + " AND owner_token = :token AND status = 'pending'"))
			.params(keyParams(reservation.request()))
			.param("token", reservation.ownerToken())
			.query(Integer.class)
			.single();
	}

	/** Release at most {@code batchSize} pending reservations past their TTL; rows locked elsewhere are skipped. */
	int sweep(int batchSize) {
		return this.jdbc.sql(release("""
				ctid IN (SELECT ctid FROM eec_routing_idempotency
				         WHERE status = 'pending' AND expires_at <= now()
				         ORDER BY expires_at LIMIT :batch FOR UPDATE SKIP LOCKED)
				AND status = 'pending' AND expires_at <= now()"""))
			.param("batch", batchSize)
			.query(Integer.class)
			.single();
	}

	/** Moves the rows matching {@code where} to failed_before_commit and announces each of them. */
	private static String release(String where) {
		return """
				WITH settled AS (
				    UPDATE eec_routing_idempotency
				    SET status = 'failed_before_commit', expires_at = now(), updated_at = now()
				    WHERE %s
				    RETURNING tenant_scope, pool_id, idempotency_key, has_waiters)
				""".formatted(where) + NOTIFY_SETTLED;
	}

	/**
	 * Delete at most {@code batchSize} settled rows last changed more than {@code retention} ago
	 * and no longer replayed; rows locked elsewhere are skipped.
	 */
	int purge(Duration retention, int batchSize) {
		String purgeable = """
				status IN ('completed', 'failed_before_commit')
				AND updated_at < now() - :retention * interval '1 microsecond' AND expires_at <= now()""";
		return this.jdbc.sql("""
				DELETE FROM eec_routing_idempotency
				WHERE ctid IN (SELECT ctid FROM eec_routing_idempotency WHERE %s
				               ORDER BY updated_at LIMIT :batch FOR UPDATE SKIP LOCKED)
				AND %s""".formatted(purgeable, purgeable))
			.param("retention", micros(retention))
			.param("batch", batchSize)
			.update();
	}

	/** @return the current {@code lock_timeout} of this transaction's session */
	String lockTimeout() {
		return this.jdbc.sql("SELECT current_setting('lock_timeout')").query(String.class).single();
	}

	/** Set {@code lock_timeout} until the end of the current transaction. */
	void setLocalLockTimeout(String value) {
		this.jdbc.sql("SELECT set_config('lock_timeout', :value, true)").param("value", value).query(String.class)
			.single();
	}

	private static Map<String, String> keyParams(IdempotentRequest request) {
		return Map.of("scope", request.tenantScope(), "pool", request.pool(), "key", request.key());
	}

	private static long micros(Duration duration) {
		return duration.toNanos() / 1000;
	}

	private static Row mapRow(ResultSet rs, int row) throws SQLException {
		Integer responseStatus = rs.getObject("response_status", Integer.class);
		return new Row(rs.getString("status"), rs.getString("request_fingerprint"), rs.getString("decision_id"),
				responseStatus, rs.getString("headers"), rs.getBytes("response_body"),
				rs.getObject("updated_at", OffsetDateTime.class), rs.getObject("expires_at", OffsetDateTime.class),
				rs.getBoolean("expired"));
	}

	record Row(String status, String fingerprint, String decisionId, Integer responseStatus, String headersJson,
			byte[] body, OffsetDateTime updatedAt, OffsetDateTime expiresAt, boolean expired) {

		boolean reclaimable() {
			return "failed_before_commit".equals(this.status) || ("completed".equals(this.status) && this.expired);
		}

	}

}
