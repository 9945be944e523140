package io.ductor.effect.internal;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.springframework.jdbc.core.JdbcTemplate;

/**
 * The reconciler's sweep of the leases no index watches: the lease of an intent recorded
 * already leased at commit, and the lease of a drainer's claim. Each such lease carries
 * the id of the transaction that took it ({@code lease_xid}, written once per lease) in
 * an index whose columns never change afterwards, so that the attempt's completion is a
 * heap-only update that writes no index entry.
 * <p>
 * The sweep walks that index from its watermark ({@code eec_effect_lease_sweep}) up to
 * the oldest transaction still running when the round began: every lease taken by a
 * transaction below it is committed (or rolled back) and visible, so none is ever passed
 * over while its transaction is still open. Of each lease it reads: an attempt no longer
 * in flight under it is passed; an expired one is redriven as the lease index's expired
 * leases are ({@link IntentRedrive}); one still live after {@link #HAND_OVER_AFTER} is
 * handed to the lease index (its {@code lease_swept} cleared: one more row version, for
 * long attempts only); a younger live one is walked again at the next round. The
 * watermark then moves past everything walked, but never past a live lease nor one it
 * could not settle (a row another transaction held locked). Once it reaches the horizon,
 * the sweep walks on, the same way, over the leases of the transactions that ended past
 * it (from where this instance's last such walk got, up to the next transaction still
 * running), so that a transaction left open holds back the watermark but not the redrive
 * of expired leases committed after it began. One instance sweeps at a time: a round
 * locks the watermark's row, and another instance's round skips it.
 */
public final class LeaseSweep {

	/**
	 * How long a lease stays with the sweep while its attempt runs, before the sweep
	 * hands it to the lease index, so that a long attempt does not hold the watermark.
	 */
	static final Duration HAND_OVER_AFTER = Duration.ofSeconds(1);

	/** How many steps of {@code limit} leases one sweep walks at most. */
	private static final int MAX_STEPS = 100;

	/**
	 * The oldest transaction still running (every lease taken below it is visible), and
	 * the next one still running after it, or the first not yet started: every lease
	 * taken between them is visible too.
	 */
	private static final String HORIZON_SQL = """
			SELECT pg_snapshot_xmin(s)::text::bigint,
			    COALESCE((SELECT min(x::text::bigint) FROM pg_snapshot_xip(s) x WHERE x <> pg_snapshot_xmin(s)),
			             pg_snapshot_xmax(s)::text::bigint)
			FROM pg_current_snapshot() s""";

	private static final String WATERMARK_SQL = """
			SELECT lease_xid, intent_id FROM eec_effect_lease_sweep WHERE name = 'intents'
			FOR UPDATE SKIP LOCKED""";

	private static final String MOVE_WATERMARK_SQL = """
			UPDATE eec_effect_lease_sweep SET lease_xid = ?, intent_id = ?, updated_at = ductor_now()
			WHERE name = 'intents'""";

	/** The leases past the watermark whose transaction ended, in the index's order. */
	public static final String LEASES_SQL = """
			SELECT i.id, i.lease_xid, (i.status = 'in_flight' AND i.lease_swept) AS held,
			    i.lease_expires_at < ductor_now() AS expired,
			    i.updated_at < ductor_now() - ? * interval '1 millisecond' AS long_running
			FROM eec_effect_intent i
			WHERE i.lease_xid IS NOT NULL AND (i.lease_xid, i.id) > (?, ?) AND i.lease_xid < ?
			ORDER BY i.lease_xid, i.id
			LIMIT ?""";

	/** The expired swept leases among the ids given, locked unless another holds them. */
	private static final String EXPIRED_SQL = """
			SELECT id FROM eec_effect_intent
			WHERE id = ANY (:ids) AND status = 'in_flight' AND lease_swept AND lease_expires_at < ductor_now()
			FOR UPDATE SKIP LOCKED""";

	/** Hands live swept leases to the lease index. */
	private static final String HAND_OVER_SQL = """
			UPDATE eec_effect_intent SET lease_swept = false
			WHERE id = ANY (ARRAY(SELECT id FROM eec_effect_intent
			                      WHERE id = ANY (?) AND status = 'in_flight' AND lease_swept
			                      FOR NO KEY UPDATE SKIP LOCKED))
			RETURNING id""";

	/** The ids given that are still in flight under a swept lease, with their lease. */
	private static final String STILL_HELD_SQL = """
			SELECT id, lease_xid FROM eec_effect_intent WHERE id = ANY (?) AND status = 'in_flight' AND lease_swept""";

	private final JdbcTemplate template;

	/**
	 * How far this instance's walk past the horizon got: only a shortcut, the watermark
	 * is what no lease is ever passed over by.
	 */
	private volatile Position ahead = new Position(0, 0);

	LeaseSweep(JdbcTemplate template) {
		this.template = template;
	}

	/**
	 * One sweep: walks the leases past the watermark, {@code limit} at a time, redrives
	 * the expired ones, hands the long-running ones to the lease index and moves the
	 * watermark up to the first live lease that may still complete soon, or to the oldest
	 * transaction still running; then walks the leases committed past that transaction
	 * the same way.
	 * @return the intents redriven
	 */
	List<Settled> sweep(int limit, Collection<String> reconciled, Collection<String> limited) {
		List<Settled> redriven = new ArrayList<>();
		Sweep sweep = new Sweep();
		for (int step = 0; step < MAX_STEPS; step++) {
			Boolean more = this.template.execute((Connection connection) -> BatchFaults.inTransaction(connection, null,
					() -> step(connection, limit, reconciled, limited, sweep)));
			redriven.addAll(sweep.redriven);
			sweep.redriven.clear();
			if (!Boolean.TRUE.equals(more)) {
				break;
			}
		}
		return redriven;
	}

	/**
	 * One step, in a transaction of its own: walks at most {@code limit} leases.
	 * @return whether the walk was cut short by the limit (more may follow)
	 */
	private boolean step(Connection connection, int limit, Collection<String> reconciled, Collection<String> limited,
			Sweep sweep) throws SQLException {
		// read before this transaction takes an id of its own, which would hold it back
		long horizon;
		long nextRunning;
		try (PreparedStatement statement = connection.prepareStatement(HORIZON_SQL);
				ResultSet rs = statement.executeQuery()) {
			rs.next();
			horizon = rs.getLong(1);
			nextRunning = rs.getLong(2);
		}
		Position watermark;
		try (PreparedStatement statement = connection.prepareStatement(WATERMARK_SQL);
				ResultSet rs = statement.executeQuery()) {
			if (!rs.next()) {
				// another instance is sweeping
				return false;
			}
			watermark = new Position(rs.getLong(1), rs.getLong(2));
		}
		Position from = (sweep.walked != null && sweep.walked.compareTo(watermark) > 0) ? sweep.walked : watermark;
		Walk below = walk(connection, from, horizon, limit);
		sweep.walked = below.last();
		Position reached = (below.walked() < limit) ? new Position(horizon - 1, Long.MAX_VALUE) : below.last();
		sweep.keepBefore(below.firstLive());
		sweep.keepBefore(settle(connection, below, reconciled, limited, sweep.redriven));
		reached = sweep.capped(reached);
		if (reached.compareTo(watermark) > 0) {
			try (PreparedStatement statement = connection.prepareStatement(MOVE_WATERMARK_SQL)) {
				statement.setLong(1, reached.xid());
				statement.setLong(2, reached.id());
				statement.executeUpdate();
			}
		}
		if (below.walked() < limit) {
			// past the horizon, the leases of the transactions that ended after the
			// oldest one still running began: an expired one need not wait for a
			// transaction left open, though the watermark does. The walk stops before
			// the next transaction still running (one that took its id before others
			// that ended may still commit a lease), and goes on over the steps of this
			// sweep while it fills its limit.
			Position pastFrom = new Position(horizon - 1, Long.MAX_VALUE);
			for (Position after : new Position[] { this.ahead, sweep.pastWalked }) {
				if (after != null && after.compareTo(pastFrom) > 0) {
					pastFrom = after;
				}
			}
			Walk past = walk(connection, pastFrom, nextRunning, limit);
			if (sweep.beyond == null) {
				sweep.beyond = new Sweep();
			}
			sweep.pastWalked = past.last();
			sweep.beyond.keepBefore(past.firstLive());
			sweep.beyond.keepBefore(settle(connection, past, reconciled, limited, sweep.redriven));
			this.ahead = sweep.beyond.capped(past.last());
			return past.walked() == limit;
		}
		return true;
	}

	/**
	 * Walks at most {@code limit} leases after {@code from} taken by transactions below
	 * {@code upto}.
	 */
	private static Walk walk(Connection connection, Position from, long upto, int limit) throws SQLException {
		List<Long> expired = new ArrayList<>();
		List<Long> longRunning = new ArrayList<>();
		Position last = from;
		Position firstLive = null;
		int walked = 0;
		try (PreparedStatement statement = connection.prepareStatement(LEASES_SQL)) {
			statement.setLong(1, HAND_OVER_AFTER.toMillis());
			statement.setLong(2, from.xid());
			statement.setLong(3, from.id());
			statement.setLong(4, upto);
			statement.setInt(5, limit);
			try (ResultSet rs = statement.executeQuery()) {
				while (rs.next()) {
					walked++;
					long id = rs.getLong(1);
					last = new Position(rs.getLong(2), id);
					if (rs.getBoolean(3)) {
						if (rs.getBoolean(4)) {
							expired.add(id);
						}
						else if (rs.getBoolean(5)) {
							longRunning.add(id);
						}
						else if (firstLive == null) {
							// a live attempt that may still complete soon: walked again
							firstLive = last;
						}
					}
				}
			}
		}
		return new Walk(last, firstLive, walked, expired, longRunning);
	}

	/**
	 * Redrives the expired leases walked and hands the long-running ones to the lease
	 * index.
	 * @return the first of them that another transaction held locked (walked again next
	 * time), or {@code null}
	 */
	private static Position settle(Connection connection, Walk walk, Collection<String> reconciled,
			Collection<String> limited, List<Settled> redriven) throws SQLException {
		redriven.addAll(redrive(connection, walk.expired(), reconciled, limited));
		handOver(connection, walk.longRunning());
		List<Long> walkedHeld = new ArrayList<>(walk.expired());
		walkedHeld.addAll(walk.longRunning());
		if (walkedHeld.isEmpty()) {
			return null;
		}
		Position first = null;
		try (PreparedStatement statement = connection.prepareStatement(STILL_HELD_SQL)) {
			statement.setArray(1, BatchFaults.array(connection, "bigint", walkedHeld.toArray(Long[]::new)));
			try (ResultSet rs = statement.executeQuery()) {
				while (rs.next()) {
					Position held = new Position(rs.getLong(2), rs.getLong(1));
					if (first == null || held.compareTo(first) < 0) {
						first = held;
					}
				}
			}
		}
		return first;
	}

	/**
	 * What one walk saw: the last lease walked, the first that is live and may still
	 * complete soon, how many it walked, the expired and the long-running ones.
	 */
	private record Walk(Position last, Position firstLive, int walked, List<Long> expired, List<Long> longRunning) {

	}

	/** One sweep's progress over its steps. */
	private static final class Sweep {

		final List<Settled> redriven = new ArrayList<>();

		/** The last lease walked. */
		Position walked;

		/** The first lease walked that is still held: no watermark passes it. */
		Position keep;

		/** The last lease walked past the horizon. */
		Position pastWalked;

		/** The walk past the horizon: the first lease it walked that is still held. */
		Sweep beyond;

		void keepBefore(Position held) {
			if (held != null && (this.keep == null || held.compareTo(this.keep) < 0)) {
				this.keep = held;
			}
		}

		/** {@code reached}, or just before the first lease still held. */
		Position capped(Position reached) {
			if (this.keep == null) {
				return reached;
			}
			Position before = new Position(this.keep.xid(), this.keep.id() - 1);
			return (before.compareTo(reached) < 0) ? before : reached;
		}

	}

	private static List<Settled> redrive(Connection connection, List<Long> expired, Collection<String> reconciled,
			Collection<String> limited) throws SQLException {
		if (expired.isEmpty()) {
			return List.of();
		}
		String batch = "WITH expired AS (" + EXPIRED_SQL + ")\n" + IntentRedrive.REDRIVE_UPDATE_SQL.formatted(
				"ARRAY(SELECT id FROM expired)", IntentClaims.textArray(reconciled), IntentClaims.textArray(limited));
		Map<String, Object> ids = new HashMap<>();
		ids.put("ids", BatchFaults.array(connection, "bigint", expired.toArray(Long[]::new)));
		List<Settled> all = BatchFaults.eachInSavepoint(connection, () -> {
			try (PreparedStatement statement = BatchFaults.prepare(connection, batch, ids)) {
				return Settled.readAll(statement);
			}
		}, (fault) -> null);
		if (all != null) {
			return all;
		}
		// one of them breaks a constraint: each in a savepoint, the offender failed
		List<Settled> settled = new ArrayList<>();
		for (long id : expired) {
			Map<String, Object> one = new HashMap<>();
			one.put("ids", BatchFaults.array(connection, "bigint", new Long[] { id }));
			settled.addAll(BatchFaults.eachInSavepoint(connection, () -> {
				try (PreparedStatement statement = BatchFaults.prepare(connection, batch, one)) {
					return Settled.readAll(statement);
				}
			}, (fault) -> IntentOutcomes.failInFlight(connection, id, null, null,
					"The lease of this intent expired and Ductor could not redrive it: " + fault)));
		}
		return settled;
	}

	private static void handOver(Connection connection, List<Long> longRunning) throws SQLException {
		if (longRunning.isEmpty()) {
			return;
		}
		try (PreparedStatement statement = connection.prepareStatement(HAND_OVER_SQL)) {
			statement.setArray(1, BatchFaults.array(connection, "bigint", longRunning.toArray(Long[]::new)));
			BatchFaults.ids(statement);
		}
	}

	/** A place in the sweep's index: a lease's transaction id, then the intent's id. */
	record Position(long xid, long id) implements Comparable<Position> {

		@Override
		public int compareTo(Position other) {
			int byXid = Long.compare(this.xid, other.xid);
			return (byXid != 0) ? byXid : Long.compare(this.id, other.id);
		}

	}

}
