package io.ductor.idempotency.internal;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Savepoint;
import java.sql.Types;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.List;
import java.util.Optional;
import java.util.UUID;

import javax.sql.DataSource;

import org.springframework.jdbc.core.ConnectionCallback;
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

	/** What {@link #reserveNew} or {@link #reclaim} did. */
	enum Claim {

		/** The row was inserted or taken over: the key is reserved. */
		INSERTED,

		/** A row with the key exists already. */
		TAKEN,

		/**
		 * Another transaction holds the key's advisory lock: it is reserving this key
		 * right now, or a key whose lock collides with this one's.
		 */
		LOCKED

	}

	/**
	 * What one look at a key found: the claim, and the row it found when the key had one
	 * already.
	 */
	record Found(Claim claim, Row row) {
	}

	/** The SQLSTATE of a lock wait cut short by {@code lock_timeout}. */
	private static final String LOCK_NOT_AVAILABLE = "55P03";

	/**
	 * How long the probe of a key whose advisory lock another transaction holds waits for
	 * a row lock: a row of this key being inserted or taken over by that transaction
	 * makes it wait (then the key is in flight); a colliding key never does.
	 */
	static final String PROBE_LOCK_TIMEOUT = "10ms";

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

	private static final String ROW_COLUMNS = """
			status, request_fingerprint, decision_id, response_status, response_headers::text AS headers,
			response_body, updated_at, expires_at, expires_at <= ductor_now() AS expired""";

	/**
	 * Key (1-3), fingerprint (4), token (5), pending TTL in microseconds (6): a pending
	 * row, for the statements below.
	 */
	private static final String INSERT_PENDING = """
			INSERT INTO eec_routing_idempotency AS r
			    (tenant_scope, pool_id, idempotency_key, status, request_fingerprint, owner_token, expires_at)
			SELECT ?, ?, ?, 'pending', ?, ?, ductor_now() + ? * interval '1 microsecond'""";

	/** Takes over a released row or a completed one past its TTL, and only those. */
	private static final String ON_CONFLICT_RECLAIM = """
			ON CONFLICT (tenant_scope, pool_id, idempotency_key) DO UPDATE
			SET status = 'pending', request_fingerprint = excluded.request_fingerprint,
			    owner_token = excluded.owner_token, decision_id = NULL, response_status = NULL,
			    response_headers = NULL, response_body = NULL, expires_at = excluded.expires_at,
			    has_waiters = false, created_at = ductor_now(), updated_at = ductor_now()
			WHERE r.status = 'failed_before_commit' OR (r.status = 'completed' AND r.expires_at <= ductor_now())
			RETURNING r.owner_token""";

	/**
	 * Key (1-3), lock (4), then {@link #INSERT_PENDING}'s parameters (5-10). Returns the
	 * key's row when it has one, without taking any lock: a replay, a reused key or a
	 * pending two-phase reservation locks nothing, even in a long transaction of the
	 * caller's. Only a key with no row takes the key's advisory lock
	 * ({@code pg_try_advisory_xact_lock}, held until the transaction ends), and inserts a
	 * new row when it got it, so nobody waits inside PostgreSQL for a row being inserted
	 * by an open transaction. On a conflict it neither waits for nor locks the existing
	 * row.
	 */
	private static final String RESERVE_NEW = """
			WITH existing AS (SELECT %s FROM eec_routing_idempotency WHERE %s),
			lock AS (SELECT pg_try_advisory_xact_lock(?) AS granted WHERE NOT EXISTS (SELECT 1 FROM existing)),
			reserved AS (
			    %s FROM lock WHERE granted
			    ON CONFLICT (tenant_scope, pool_id, idempotency_key) DO NOTHING
			    RETURNING r.owner_token)
			SELECT (SELECT granted FROM lock) AS granted, EXISTS (SELECT 1 FROM reserved) AS inserted, e.*
			FROM (SELECT 1) AS one LEFT JOIN existing AS e ON true""".formatted(ROW_COLUMNS, KEY_MATCHES,
			INSERT_PENDING);

	/**
	 * Lock (1), then {@link #INSERT_PENDING}'s parameters (2-7). Takes over a released or
	 * expired key atomically, under the key's advisory lock. On any conflict PostgreSQL
	 * locks the existing row, reclaimable or not, until the transaction ends: only for
	 * keys seen to be reclaimable, so replays and waiting duplicates lock nothing.
	 */
	private static final String RECLAIM = """
			WITH lock AS (SELECT pg_try_advisory_xact_lock(?) AS granted),
			reserved AS (%s FROM lock WHERE granted
			%s)
			SELECT (SELECT granted FROM lock) AS granted, EXISTS (SELECT 1 FROM reserved) AS inserted"""
		.formatted(INSERT_PENDING, ON_CONFLICT_RECLAIM.indent(4).stripTrailing());

	/**
	 * {@link #INSERT_PENDING}'s parameters: a new row, or the takeover of a reclaimable
	 * one, without the advisory lock. Run under a short {@code lock_timeout} by
	 * {@link #probe}.
	 */
	private static final String PROBE = INSERT_PENDING + "\n" + ON_CONFLICT_RECLAIM;

	/** Key (1-3). */
	private static final String MARK_WAITED = "UPDATE eec_routing_idempotency SET has_waiters = true WHERE "
			+ KEY_MATCHES + " AND status = 'pending' AND NOT has_waiters";

	/** Key (1-3). */
	private static final String FIND = "SELECT " + ROW_COLUMNS + " FROM eec_routing_idempotency WHERE " + KEY_MATCHES;

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
	 * One look at a key: the row it has, or, when it has none, the insertion of a pending
	 * reservation under the key's advisory lock (held until the transaction ends).
	 * @return inserted; taken, with the row found (none when it was inserted by another
	 * transaction after this statement began); or locked (another transaction holds the
	 * lock)
	 */
	Found reserveNew(IdempotentRequest request, UUID token, Duration pendingTtl, long lockKey) {
		return this.jdbc.query(RESERVE_NEW, (ps) -> {
			bindKey(ps, 1, request);
			ps.setLong(4, lockKey);
			bindPending(ps, 5, request, token, pendingTtl);
		}, (rs) -> {
			rs.next();
			if (rs.getBoolean("inserted")) {
				return new Found(Claim.INSERTED, null);
			}
			if (rs.getString("status") != null) {
				return new Found(Claim.TAKEN, mapRow(rs, 0));
			}
			boolean granted = rs.getBoolean("granted");
			return new Found(granted ? Claim.TAKEN : Claim.LOCKED, null);
		});
	}

	/**
	 * Take over a released key or a completed one past its TTL (or insert the key's row,
	 * should it have been purged meanwhile), in one statement, under the key's advisory
	 * lock.
	 * @return inserted (the key is reserved), taken (another request took it first) or
	 * locked
	 */
	Claim reclaim(IdempotentRequest request, UUID token, Duration pendingTtl, long lockKey) {
		return this.jdbc.query(RECLAIM, (ps) -> {
			ps.setLong(1, lockKey);
			bindPending(ps, 2, request, token, pendingTtl);
		}, (rs) -> {
			rs.next();
			return !rs.getBoolean("granted") ? Claim.LOCKED : rs.getBoolean("inserted") ? Claim.INSERTED : Claim.TAKEN;
		});
	}

	/**
	 * Reserve a key whose advisory lock another transaction holds, without the lock: the
	 * insertion, or the takeover of a reclaimable row, waits at most
	 * {@value #PROBE_LOCK_TIMEOUT} for a row lock. A row of this key being inserted or
	 * taken over by an open transaction makes it wait, so the key is in flight; a key
	 * whose lock merely collides with another key's is reserved at once. Runs in a
	 * savepoint of the current transaction, or in a short transaction of its own outside
	 * one, so a timeout leaves the caller's transaction usable and no row locked.
	 * @return inserted, taken (a settled row the caller looks at again) or locked (in
	 * flight)
	 */
	Claim probe(IdempotentRequest request, UUID token, Duration pendingTtl) {
		return this.jdbc.execute((ConnectionCallback<Claim>) (connection) -> {
			boolean ownTransaction = connection.getAutoCommit();
			Savepoint savepoint = null;
			if (ownTransaction) {
				connection.setAutoCommit(false);
			}
			else {
				savepoint = connection.setSavepoint();
			}
			boolean keep = false;
			try {
				String previousTimeout = setLockTimeout(connection, PROBE_LOCK_TIMEOUT);
				boolean inserted;
				try (PreparedStatement ps = connection.prepareStatement(PROBE)) {
					bindPending(ps, 1, request, token, pendingTtl);
					try (ResultSet rs = ps.executeQuery()) {
						inserted = rs.next();
					}
				}
				catch (SQLException ex) {
					if (LOCK_NOT_AVAILABLE.equals(ex.getSQLState())) {
						return Claim.LOCKED;
					}
					throw ex;
				}
				if (inserted && !ownTransaction) {
					setLockTimeout(connection, previousTimeout);
				}
				keep = inserted;
				return inserted ? Claim.INSERTED : Claim.TAKEN;
			}
			finally {
				// not reserved: undone, so that no row stays locked by a conflict
				if (ownTransaction) {
					try {
						if (keep) {
							connection.commit();
						}
						else {
							connection.rollback();
						}
					}
					finally {
						connection.setAutoCommit(true);
					}
				}
				else if (keep) {
					connection.releaseSavepoint(savepoint);
				}
				else {
					connection.rollback(savepoint);
				}
			}
		});
	}

	/**
	 * Sets {@code lock_timeout} for the rest of the transaction.
	 * @return the value it had
	 */
	private static String setLockTimeout(Connection connection, String timeout) throws SQLException {
		try (PreparedStatement ps = connection
			.prepareStatement("SELECT current_setting('lock_timeout'), set_config('lock_timeout', ?, true)")) {
			ps.setString(1, timeout);
			try (ResultSet rs = ps.executeQuery()) {
				rs.next();
				return rs.getString(1);
			}
		}
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

	private static void bindPending(PreparedStatement ps, int first, IdempotentRequest request, UUID token,
			Duration pendingTtl) throws SQLException {
		bindKey(ps, first, request);
		ps.setString(first + 3, request.fingerprint());
		ps.setObject(first + 4, token);
		ps.setLong(first + 5, micros(pendingTtl));
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
