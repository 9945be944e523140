package io.ductor.idempotency.internal;

import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.List;
import java.util.Optional;
import java.util.UUID;

import javax.sql.DataSource;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.PreparedStatementSetter;

import io.ductor.idempotency.IdempotencyService;
import io.ductor.idempotency.IdempotentRequest;
import io.ductor.idempotency.Reservation;
import io.ductor.idempotency.StoredResponse;

/**
 * The SQL behind ingress idempotency: {@code eec_routing_idempotency}. Every time is the
 * database's {@code ductor_now()}; every statement is a single short one.
 * <p>
 * Reserve and complete run once per request, so their SQL is built once and their
 * parameters are bound by position with explicit types: no per-call SQL formatting,
 * named-parameter rewriting or type guessing, which on a small machine cost a visible
 * share of the CPU the database needs.
 */
public class IdempotencyStore {

	/** The first key of Ductor's advisory locks ("DUCT"). */
	static final int LOCK_SPACE = 0x44554354;

	/** What {@link #reserveNew} did. */
	enum Claim {

		/** The row was inserted: the key is reserved. */
		INSERTED,

		/** A row with the key exists already. */
		TAKEN,

		/**
		 * Another transaction holds the key's lock: it is reserving the key right now.
		 */
		LOCKED

	}

	/**
	 * Counts the settled rows and, in the settling statement, notifies
	 * {@link IdempotencyService#CHANNEL} with the key of each one a duplicate is waiting
	 * for. Without waiters there is no notification: PostgreSQL serializes the commits of
	 * notifying transactions.
	 */
	private static final String NOTIFY_SETTLED = """
			SELECT count(*) + coalesce(sum(CASE WHEN has_waiters THEN length(pg_notify('%s',
			           tenant_scope || chr(31) || pool_id || chr(31) || idempotency_key)::text) END), 0)
			FROM settled""".formatted(IdempotencyService.CHANNEL);

	/** Three placeholders for the key, bound by {@link #bindKey}. */
	private static final String KEY_MATCHES = "tenant_scope = ? AND pool_id = ? AND idempotency_key = ?";

	/**
	 * The key's advisory lock, taken for the rest of the transaction: held by the request
	 * that reserves the key until its transaction ends, so that nobody waits inside
	 * PostgreSQL for a row being inserted or reclaimed by an open transaction. The
	 * two-key form with Ductor's own first key keeps it apart from the application's
	 * single-key advisory locks; a collision of two keys' hashes only makes one of them
	 * look in flight for a moment.
	 */
	private static final String TRY_KEY_LOCK = "pg_try_advisory_xact_lock(" + IdempotencyStore.LOCK_SPACE
			+ ", hashtext(?))";

	/**
	 * Key (1-3), fingerprint (4), token (5), pending TTL in microseconds (6), lock name
	 * (7): a row inserted only when the key's advisory lock is granted.
	 */
	private static final String INSERT = """
			INSERT INTO eec_routing_idempotency AS r
			    (tenant_scope, pool_id, idempotency_key, status, request_fingerprint, owner_token, expires_at)
			SELECT ?, ?, ?, 'pending', ?, ?, ductor_now() + ? * interval '1 microsecond'
			WHERE\s""" + TRY_KEY_LOCK + "\n";

	/**
	 * Same parameters. A new key only: on a conflict it neither waits for nor locks the
	 * existing row. Answers whether the key's lock was granted and whether the row was
	 * inserted; a lock not granted means another transaction is reserving the key right
	 * now.
	 */
	private static final String RESERVE_NEW = """
			WITH lock AS (SELECT %s AS granted),
			reserved AS (
			    INSERT INTO eec_routing_idempotency AS r
			        (tenant_scope, pool_id, idempotency_key, status, request_fingerprint, owner_token, expires_at)
			    SELECT ?, ?, ?, 'pending', ?, ?, ductor_now() + ? * interval '1 microsecond' FROM lock WHERE granted
			    ON CONFLICT (tenant_scope, pool_id, idempotency_key) DO NOTHING
			    RETURNING r.owner_token)
			SELECT (SELECT granted FROM lock) AS granted, EXISTS (SELECT 1 FROM reserved) AS inserted"""
		.formatted(TRY_KEY_LOCK);

	/**
	 * Key (1-3), fingerprint (4), token (5), pending TTL in microseconds (6), lock name
	 * (7). A new key, or takes over a released or expired one atomically. On any conflict
	 * PostgreSQL locks the existing row, reclaimable or not, until the transaction ends:
	 * only for keys seen to be reclaimable, so replays and waiting duplicates lock
	 * nothing.
	 */
	private static final String RESERVE = INSERT + """
			ON CONFLICT (tenant_scope, pool_id, idempotency_key) DO UPDATE
			SET status = 'pending', request_fingerprint = excluded.request_fingerprint,
			    owner_token = excluded.owner_token, decision_id = NULL, response_status = NULL,
			    response_headers = NULL, response_body = NULL, expires_at = excluded.expires_at,
			    has_waiters = false, created_at = ductor_now(), updated_at = ductor_now()
			WHERE r.status = 'failed_before_commit' OR (r.status = 'completed' AND r.expires_at <= ductor_now())
			RETURNING r.owner_token""";

	/** Key (1-3). */
	private static final String MARK_WAITED = "UPDATE eec_routing_idempotency SET has_waiters = true WHERE "
			+ KEY_MATCHES + " AND status = 'pending' AND NOT has_waiters";

	/** Key (1-3). */
	private static final String FIND = """
			SELECT status, request_fingerprint, decision_id, response_status, response_headers::text AS headers,
			       response_body, updated_at, expires_at, expires_at <= ductor_now() AS expired
			FROM eec_routing_idempotency WHERE\s""" + KEY_MATCHES;

	/**
	 * Decision (1), status (2), headers (3), body (4), completed TTL in microseconds (5),
	 * key (6-8), token (9).
	 */
	private static final String COMPLETE = """
			WITH settled AS (
			    UPDATE eec_routing_idempotency
			    SET status = 'completed', decision_id = ?, response_status = ?,
			        response_headers = ?::jsonb, response_body = ?,
			        expires_at = ductor_now() + ? * interval '1 microsecond', updated_at = ductor_now()
			    WHERE %s AND owner_token = ? AND status IN ('pending', 'failed_before_commit')
			    RETURNING tenant_scope, pool_id, idempotency_key, has_waiters)
			""".formatted(KEY_MATCHES) + NOTIFY_SETTLED;

	/** Key (1-3), token (4). */
	private static final String FAIL = release(KEY_MATCHES + " AND owner_token = ? AND status = 'pending'");

	/** Batch size (1). */
	private static final String SWEEP = release("""
			ctid IN (SELECT ctid FROM eec_routing_idempotency
			         WHERE status = 'pending' AND expires_at <= ductor_now()
			         ORDER BY expires_at LIMIT ? FOR UPDATE SKIP LOCKED)
			AND status = 'pending' AND expires_at <= ductor_now()""");

	/** Retention in microseconds (1), batch size (2), retention in microseconds (3). */
	private static final String PURGE;

	static {
		String purgeable = """
				status IN ('completed', 'failed_before_commit')
				AND updated_at < ductor_now() - ? * interval '1 microsecond' AND expires_at <= ductor_now()""";
		PURGE = """
				DELETE FROM eec_routing_idempotency
				WHERE ctid IN (SELECT ctid FROM eec_routing_idempotency WHERE %s
				               ORDER BY updated_at LIMIT ? FOR UPDATE SKIP LOCKED)
				AND %s""".formatted(purgeable, purgeable);
	}

	private final JdbcTemplate jdbc;

	public IdempotencyStore(DataSource dataSource) {
		this.jdbc = new JdbcTemplate(dataSource);
	}

	/**
	 * Insert a pending reservation for a new key, under the key's advisory lock (held
	 * until the transaction ends).
	 * @return inserted, taken (a row exists) or locked (another transaction is reserving
	 * the key)
	 */
	Claim reserveNew(IdempotentRequest request, UUID token, Duration pendingTtl) {
		return this.jdbc.query(RESERVE_NEW, (ps) -> {
			ps.setString(1, DuplicateWaiters.waiterId(request));
			bindKey(ps, 2, request);
			ps.setString(5, request.fingerprint());
			ps.setObject(6, token);
			ps.setLong(7, micros(pendingTtl));
		}, (rs) -> {
			rs.next();
			return !rs.getBoolean("granted") ? Claim.LOCKED : rs.getBoolean("inserted") ? Claim.INSERTED : Claim.TAKEN;
		});
	}

	/**
	 * Insert a pending reservation, or take over a released one or a completed one past
	 * its TTL, in one statement, under the key's advisory lock.
	 * @return whether {@code token} holds the key now
	 */
	boolean reserveOrReclaim(IdempotentRequest request, UUID token, Duration pendingTtl) {
		return Boolean.TRUE.equals(this.jdbc.query(RESERVE, (ps) -> {
			bindKey(ps, 1, request);
			ps.setString(4, request.fingerprint());
			ps.setObject(5, token);
			ps.setLong(6, micros(pendingTtl));
			ps.setString(7, DuplicateWaiters.waiterId(request));
		}, ResultSet::next));
	}

	/** Marks the key's pending reservation as awaited, so settling it notifies. */
	void markWaited(IdempotentRequest request) {
		this.jdbc.update(MARK_WAITED, (ps) -> bindKey(ps, 1, request));
	}

	/**
	 * Sends a notification on {@code channel}, in a statement (and, outside a
	 * transaction, a commit) of its own.
	 */
	void notify(String channel, String payload) {
		this.jdbc.query("SELECT pg_notify(?, ?)", (ps) -> {
			ps.setString(1, channel);
			ps.setString(2, payload);
		}, ResultSet::next);
	}

	/**
	 * @return the key's row as it is now, if there is one
	 */
	Optional<Row> find(IdempotentRequest request) {
		List<Row> rows = this.jdbc.query(FIND, (ps) -> bindKey(ps, 1, request), IdempotencyStore::mapRow);
		return rows.stream().findFirst();
	}

	/**
	 * Complete the reservation held by {@code token}, unless someone else reclaimed the
	 * key.
	 * @return 1 when completed, 0 when the token no longer owns an unsettled row
	 */
	public int complete(Reservation reservation, String decisionId, StoredResponse response, String headersJson,
			Duration completedTtl) {
		return count(COMPLETE, (ps) -> {
			ps.setString(1, decisionId);
			if (response != null) {
				ps.setInt(2, response.status());
				ps.setBytes(4, response.body());
			}
			else {
				ps.setNull(2, Types.INTEGER);
				ps.setNull(4, Types.BINARY);
			}
			ps.setString(3, headersJson);
			ps.setLong(5, micros(completedTtl));
			bindKey(ps, 6, reservation.request());
			ps.setObject(9, reservation.ownerToken());
		});
	}

	/**
	 * @return 1 when the pending reservation held by {@code token} was released, else 0
	 */
	public int fail(Reservation reservation) {
		return count(FAIL, (ps) -> {
			bindKey(ps, 1, reservation.request());
			ps.setObject(4, reservation.ownerToken());
		});
	}

	/**
	 * Release at most {@code batchSize} pending reservations past their TTL; rows locked
	 * elsewhere are skipped.
	 */
	int sweep(int batchSize) {
		return count(SWEEP, (ps) -> ps.setInt(1, batchSize));
	}

	/**
	 * Moves the rows matching {@code where} to failed_before_commit and announces each of
	 * them.
	 */
	private static String release(String where) {
		return """
				WITH settled AS (
				    UPDATE eec_routing_idempotency
				    SET status = 'failed_before_commit', expires_at = ductor_now(), updated_at = ductor_now()
				    WHERE %s
				    RETURNING tenant_scope, pool_id, idempotency_key, has_waiters)
				""".formatted(where) + NOTIFY_SETTLED;
	}

	/**
	 * Delete at most {@code batchSize} settled rows last changed more than
	 * {@code retention} ago and no longer replayed; rows locked elsewhere are skipped.
	 */
	int purge(Duration retention, int batchSize) {
		return this.jdbc.update(PURGE, (ps) -> {
			ps.setLong(1, micros(retention));
			ps.setInt(2, batchSize);
			ps.setLong(3, micros(retention));
		});
	}

	/** Runs a statement answering with one count. */
	private int count(String sql, PreparedStatementSetter parameters) {
		Integer count = this.jdbc.query(sql, parameters, (rs) -> rs.next() ? rs.getInt(1) : null);
		if (count == null) {
			throw new IllegalStateException("No count returned by " + sql);
		}
		return count;
	}

	private static void bindKey(PreparedStatement ps, int first, IdempotentRequest request) throws SQLException {
		ps.setString(first, request.tenantScope());
		ps.setString(first + 1, request.pool());
		ps.setString(first + 2, request.key());
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
