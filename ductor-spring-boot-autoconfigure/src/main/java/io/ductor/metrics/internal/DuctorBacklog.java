package io.ductor.metrics.internal;

import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;

import javax.sql.DataSource;

import org.springframework.jdbc.core.simple.JdbcClient;

import io.ductor.internal.InFlightIntents;

/**
 * What is waiting in Ductor's tables, read with one cheap statement: every count walks a
 * partial index of live rows in its order (so the planner never prefers a table scan,
 * wherever the live rows sit in the heap) and stops at a limit, so a million finished
 * rows cost nothing and a huge backlog costs no more than the limit (above it, the
 * pending count is PostgreSQL's estimate). Snapshots are cached for a short time so
 * metric scrapes share one query.
 */
public class DuctorBacklog {

	/**
	 * The snapshot query, with the sweep's watermark at 0; {@code :cap} is the count
	 * limit.
	 */
	public static final String SQL = sql(0);

	/**
	 * The snapshot query; {@code :cap} is the count limit.
	 * @param watermark the sweep's watermark ({@link InFlightIntents#count(long)})
	 * @return the query
	 */
	static String sql(long watermark) {
		return """
				SELECT (SELECT count(*) FROM (SELECT 1 FROM eec_effect_intent WHERE queue_status = 'pending'
				            ORDER BY next_attempt_at, id LIMIT :cap) x) AS pending,
				       (SELECT reltuples::bigint FROM pg_class WHERE oid = to_regclass('eec_effect_intent_due_idx'))
				           AS pending_estimate,
				       (SELECT min(next_attempt_at) FROM eec_effect_intent
				        WHERE queue_status = 'pending' AND next_attempt_at <= ductor_now()) AS oldest_due,
				       ductor_now() AS db_now,
				       %s AS in_flight,
				       (SELECT count(*) FROM (SELECT 1 FROM eec_effect_intent WHERE queue_status = 'failed'
				            ORDER BY queue_status, parked_at LIMIT :cap) x) AS failed,
				       (SELECT count(*) FROM (SELECT 1 FROM eec_effect_intent WHERE queue_status = 'needs_decision'
				            ORDER BY queue_status, parked_at LIMIT :cap) x) AS needs_decision,
				       (SELECT count(*) FROM (SELECT 1 FROM eec_effect_intent WHERE queue_status = 'reconciling'
				            ORDER BY next_attempt_at, id LIMIT :cap) x) AS reconciling,
				       (SELECT count(*) FROM (SELECT 1 FROM eec_routing_idempotency WHERE status = 'pending'
				            ORDER BY expires_at LIMIT :cap) x) AS pending_reservations"""
			.formatted(InFlightIntents.count(watermark));
	}

	private final JdbcClient jdbc;

	private final Duration cacheTtl;

	private final int countLimit;

	private volatile Snapshot cached;

	private volatile Failure failed;

	/**
	 * @param dataSource the database holding Ductor's tables
	 * @param cacheTtl how long {@link #snapshot()} reuses a snapshot
	 * @param countLimit the most index entries one count reads
	 */
	public DuctorBacklog(DataSource dataSource, Duration cacheTtl, int countLimit) {
		this.jdbc = JdbcClient.create(dataSource);
		this.cacheTtl = cacheTtl;
		this.countLimit = countLimit;
	}

	/**
	 * A snapshot at most the cache TTL old. A failure to read one is also kept for the
	 * cache TTL.
	 * @return the snapshot
	 * @throws org.springframework.dao.DataAccessException when the database cannot be
	 * read
	 */
	public Snapshot snapshot() {
		Snapshot snapshot = this.cached;
		if (snapshot != null && !isStale(snapshot.takenAt())) {
			return snapshot;
		}
		// an unreachable database is not asked again by every gauge of one scrape
		Failure failure = this.failed;
		if (failure != null && !isStale(failure.at())) {
			throw failure.error();
		}
		return refresh();
	}

	private boolean isStale(Instant takenAt) {
		return takenAt.plus(this.cacheTtl).isBefore(Instant.now());
	}

	/**
	 * A fresh snapshot, also cached for {@link #snapshot()}.
	 * @return the snapshot
	 * @throws org.springframework.dao.DataAccessException when the database cannot be
	 * read
	 */
	public Snapshot refresh() {
		try {
			Snapshot snapshot = query();
			this.cached = snapshot;
			this.failed = null;
			return snapshot;
		}
		catch (RuntimeException ex) {
			this.failed = new Failure(ex, Instant.now());
			throw ex;
		}
	}

	private Snapshot query() {
		long watermark = this.jdbc.sql(InFlightIntents.SWEEP_WATERMARK_SQL).query(Long.class).optional().orElse(0L);
		return this.jdbc.sql(sql(watermark)).param("cap", this.countLimit).query((rs, row) -> {
			long pending = rs.getLong("pending");
			boolean estimated = pending >= this.countLimit;
			if (estimated) {
				pending = Math.max(pending, rs.getLong("pending_estimate"));
			}
			OffsetDateTime oldestDue = rs.getObject("oldest_due", OffsetDateTime.class);
			OffsetDateTime now = rs.getObject("db_now", OffsetDateTime.class);
			Duration oldestDueAge = (oldestDue != null) ? Duration.between(oldestDue, now) : Duration.ZERO;
			return new Snapshot(pending, estimated, oldestDueAge, rs.getLong("in_flight"), rs.getLong("failed"),
					rs.getLong("needs_decision"), rs.getLong("reconciling"), rs.getLong("pending_reservations"),
					Instant.now());
		}).single();
	}

	private record Failure(RuntimeException error, Instant at) {
	}

	/**
	 * The backlog at one moment. Counts other than {@code pendingIntents} stop at the
	 * count limit.
	 *
	 * @param pendingIntents effect intents waiting to run
	 * @param pendingEstimated whether {@code pendingIntents} is PostgreSQL's estimate
	 * (above the limit)
	 * @param oldestDueAge how long the oldest due intent has been waiting past its due
	 * time
	 * @param inFlight intents being dispatched
	 * @param failed intents that failed for good
	 * @param needsDecision intents waiting for an operator's decision
	 * @param reconciling intents whose last attempt's outcome is unknown, waiting for
	 * their reconciler
	 * @param pendingReservations idempotency reservations not settled yet
	 * @param takenAt when the snapshot was read
	 */
	public record Snapshot(long pendingIntents, boolean pendingEstimated, Duration oldestDueAge, long inFlight,
			long failed, long needsDecision, long reconciling, long pendingReservations, Instant takenAt) {

		/**
		 * @return failed plus undecided intents: what needs an operator
		 */
		public long parked() {
			return this.failed + this.needsDecision;
		}

	}

}
