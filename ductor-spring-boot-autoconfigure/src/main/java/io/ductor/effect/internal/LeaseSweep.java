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
import java.util.TreeMap;

import org.springframework.jdbc.core.JdbcTemplate;

/**
 * The reconciler's sweep of the leases no index watches: the lease of an intent recorded
 * already leased at commit, and the lease of a drainer's claim. Each such lease carries
 * the id of the transaction that took it ({@code lease_xid}, written once per lease) in
 * an index whose columns never change afterwards, so that the attempt's completion is a
 * heap-only update that writes no index entry.
 * <p>
 * A round reads the server's transaction snapshot first: every transaction below its
 * {@code xmax} that is not in its list of running ones has ended, so each of its leases
 * is visible, and no later transaction can take a lease under its id. The sweep walks the
 * index over those ended transactions only: from its watermark
 * ({@code eec_effect_lease_sweep}) up to the oldest transaction still running, then over
 * each stretch between two running transactions, and between the youngest and
 * {@code xmax}. A lease of a transaction still running is never passed over: its
 * transaction's id lies outside every stretch walked until it ends. Of each lease it
 * reads: an attempt no longer in flight under it is passed; an expired one is redriven as
 * the lease index's expired leases are ({@link IntentRedrive}); one still live after
 * {@link #HAND_OVER_AFTER} is handed to the lease index (its {@code lease_swept} cleared:
 * one more row version, for long attempts only); a younger live one, or one another
 * transaction held locked, is walked again at the next round. The instance remembers the
 * stretches it walked with no lease left held in them ({@link Walked}), so that
 * transactions left open cost one walk of the leases committed after them, not one per
 * round. The watermark moves up to the first lease not so walked, which is never past the
 * oldest transaction still running. One instance sweeps at a time: a round locks the
 * watermark's row, and another instance's round skips it.
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
	 * The server's snapshot: its oldest running transaction, the first not yet started
	 * and every transaction running between them, in order.
	 */
	private static final String SNAPSHOT_SQL = """
			SELECT pg_snapshot_xmin(s)::text::bigint, pg_snapshot_xmax(s)::text::bigint,
			    ARRAY(SELECT x::text::bigint FROM pg_snapshot_xip(s) x ORDER BY 1)
			FROM pg_current_snapshot() s""";

	private static final String WATERMARK_SQL = """
			SELECT lease_xid, intent_id FROM eec_effect_lease_sweep WHERE name = 'intents'
			FOR UPDATE SKIP LOCKED""";

	private static final String MOVE_WATERMARK_SQL = """
			UPDATE eec_effect_lease_sweep SET lease_xid = ?, intent_id = ?, updated_at = ductor_now()
			WHERE name = 'intents'""";

	/** The leases after one place of the index up to another, in the index's order. */
	public static final String LEASES_SQL = """
			SELECT i.id, i.lease_xid, (i.status = 'in_flight' AND i.lease_swept) AS held,
			    i.lease_expires_at < ductor_now() AS expired,
			    i.updated_at < ductor_now() - ? * interval '1 millisecond' AS long_running
			FROM eec_effect_intent i
			WHERE i.lease_xid IS NOT NULL AND (i.lease_xid, i.id) > (?, ?) AND (i.lease_xid, i.id) <= (?, ?)
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

	/**
	 * Hands to the lease index the leases in flight under an id no transaction of this
	 * server has reached: leases of the server the database came from.
	 */
	private static final String HAND_OVER_FOREIGN_SQL = """
			UPDATE eec_effect_intent SET lease_swept = false
			WHERE lease_xid >= pg_snapshot_xmax(pg_current_snapshot())::text::bigint
			  AND status = 'in_flight' AND lease_swept""";

	/** The ids given that are still in flight under a swept lease, with their lease. */
	private static final String STILL_HELD_SQL = """
			SELECT id, lease_xid FROM eec_effect_intent WHERE id = ANY (?) AND status = 'in_flight' AND lease_swept""";

	private final JdbcTemplate template;

	/**
	 * The stretches of the index this instance walked with every lease in them ended and
	 * none held, as of the last step that committed: a step works on a copy, kept only
	 * once its transaction committed, since a step that rolls back undoes its redrives.
	 */
	private volatile Walked walked = new Walked();

	LeaseSweep(JdbcTemplate template) {
		this.template = template;
	}

	/**
	 * One sweep: walks the leases of the transactions that ended, {@code limit} at a
	 * time, redrives the expired ones, hands the long-running ones to the lease index and
	 * moves the watermark up to the first lease not walked, or still held.
	 * @return the intents redriven
	 */
	List<Settled> sweep(int limit, Collection<String> reconciled, Collection<String> limited) {
		List<Settled> redriven = new ArrayList<>();
		for (int step = 0; step < MAX_STEPS; step++) {
			List<Settled> settled = new ArrayList<>();
			Walked view = this.walked.copy();
			Boolean more = this.template.execute((Connection connection) -> BatchFaults.inTransaction(connection, null,
					() -> step(connection, limit, reconciled, limited, settled, view)));
			if (view.swept) {
				// committed
				this.walked = view;
			}
			redriven.addAll(settled);
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
			List<Settled> redriven, Walked walked) throws SQLException {
		// read before this transaction takes an id of its own, which would hold it back
		long horizon;
		long next;
		Long[] running;
		try (PreparedStatement statement = connection.prepareStatement(SNAPSHOT_SQL);
				ResultSet rs = statement.executeQuery()) {
			rs.next();
			horizon = rs.getLong(1);
			next = rs.getLong(2);
			running = (Long[]) rs.getArray(3).getArray();
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
		walked.swept = true;
		boolean moved = false;
		if (watermark.xid() >= next) {
			// no transaction of this server reached the watermark: the database was moved
			// from a server whose ids ran higher (a restore, logical replication)
			watermark = new Position(0, 0);
			moved = true;
			try (PreparedStatement statement = connection.prepareStatement(HAND_OVER_FOREIGN_SQL)) {
				statement.executeUpdate();
			}
		}
		walked.forgetThrough(watermark);
		walked.forgetPast(Position.before(next));
		// the stretches of ended transactions: below the oldest running one, then
		// between each running one and the next, or the first not yet started
		List<Position[]> stretches = new ArrayList<>();
		stretches.add(new Position[] { watermark, Position.before(horizon) });
		for (int i = 0; i < running.length; i++) {
			long end = (i + 1 < running.length) ? running[i + 1] : next;
			stretches.add(new Position[] { Position.before(running[i] + 1), Position.before(end) });
		}
		int left = limit;
		int[] passed = new int[1];
		for (Position[] stretch : stretches) {
			left = walkStretch(connection, walked, stretch[0], stretch[1], left, reconciled, limited, redriven, passed);
			if (left == 0) {
				break;
			}
		}
		Position reached = walked.reach(watermark, Position.before(horizon));
		if (moved || reached.compareTo(watermark) > 0) {
			try (PreparedStatement statement = connection.prepareStatement(MOVE_WATERMARK_SQL)) {
				statement.setLong(1, reached.xid());
				statement.setLong(2, reached.id());
				statement.executeUpdate();
			}
		}
		// a step that walked only leases still held would walk them again: the next round
		// resumes there
		return left == 0 && passed[0] > 0;
	}

	/**
	 * Walks the leases after {@code from} up to {@code to}, at most {@code left} of them,
	 * past the stretches already walked, adding to {@code passed} how many were not left
	 * held.
	 * @return how many more leases this step may walk
	 */
	private static int walkStretch(Connection connection, Walked walked, Position from, Position to, int left,
			Collection<String> reconciled, Collection<String> limited, List<Settled> redriven, int[] passed)
			throws SQLException {
		Position at = from;
		while (left > 0 && at.compareTo(to) < 0) {
			Position skip = walked.skip(at);
			if (skip != null) {
				at = skip;
				continue;
			}
			Position nextWalked = walked.nextAfter(at);
			Position upto = (nextWalked != null && nextWalked.compareTo(to) < 0) ? nextWalked : to;
			Walk walk = walk(connection, at, upto, left);
			left -= walk.walked();
			List<Position> held = new ArrayList<>(walk.live());
			held.addAll(settle(connection, walk, reconciled, limited, redriven));
			passed[0] += walk.walked() - held.size();
			Position through = (left > 0) ? upto : walk.last();
			walked.add(at, through, held);
			at = through;
		}
		return left;
	}

	/** Walks at most {@code limit} leases after {@code from} up to {@code upto}. */
	private static Walk walk(Connection connection, Position from, Position upto, int limit) throws SQLException {
		List<Long> expired = new ArrayList<>();
		List<Long> longRunning = new ArrayList<>();
		List<Position> live = new ArrayList<>();
		Position last = from;
		int walked = 0;
		try (PreparedStatement statement = connection.prepareStatement(LEASES_SQL)) {
			statement.setLong(1, HAND_OVER_AFTER.toMillis());
			statement.setLong(2, from.xid());
			statement.setLong(3, from.id());
			statement.setLong(4, upto.xid());
			statement.setLong(5, upto.id());
			statement.setInt(6, limit);
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
						else {
							// a live attempt that may still complete soon: walked again
							live.add(last);
						}
					}
				}
			}
		}
		return new Walk(last, live, walked, expired, longRunning);
	}

	/**
	 * Redrives the expired leases walked and hands the long-running ones to the lease
	 * index.
	 * @return those that another transaction held locked (walked again next time)
	 */
	private static List<Position> settle(Connection connection, Walk walk, Collection<String> reconciled,
			Collection<String> limited, List<Settled> redriven) throws SQLException {
		redriven.addAll(redrive(connection, walk.expired(), reconciled, limited));
		handOver(connection, walk.longRunning());
		List<Long> walkedHeld = new ArrayList<>(walk.expired());
		walkedHeld.addAll(walk.longRunning());
		if (walkedHeld.isEmpty()) {
			return List.of();
		}
		List<Position> stillHeld = new ArrayList<>();
		try (PreparedStatement statement = connection.prepareStatement(STILL_HELD_SQL)) {
			statement.setArray(1, BatchFaults.array(connection, "bigint", walkedHeld.toArray(Long[]::new)));
			try (ResultSet rs = statement.executeQuery()) {
				while (rs.next()) {
					stillHeld.add(new Position(rs.getLong(2), rs.getLong(1)));
				}
			}
		}
		return stillHeld;
	}

	/**
	 * What one walk saw: the last lease walked, the live ones that may still complete
	 * soon, how many it walked, the expired and the long-running ones.
	 */
	private record Walk(Position last, List<Position> live, int walked, List<Long> expired, List<Long> longRunning) {

	}

	/**
	 * The stretches of the index one instance walked, each after one place up to another
	 * (by start), where every lease was taken by a transaction that had ended and none
	 * was held: a lease leaves its place when its intent is leased again, and a lease
	 * once no longer held is never held again, so a stretch walked stays walked.
	 */
	static final class Walked {

		private final TreeMap<Position, Position> stretches = new TreeMap<>();

		/** Whether a step locked the watermark and walked with this copy. */
		boolean swept;

		/** A copy to walk one step with. */
		synchronized Walked copy() {
			Walked copy = new Walked();
			copy.stretches.putAll(this.stretches);
			return copy;
		}

		/** The end of the stretch walked right after {@code at}, or {@code null}. */
		synchronized Position skip(Position at) {
			Map.Entry<Position, Position> stretch = this.stretches.floorEntry(at);
			return (stretch != null && stretch.getValue().compareTo(at) > 0) ? stretch.getValue() : null;
		}

		/** Where the next stretch walked after {@code at} starts, or {@code null}. */
		synchronized Position nextAfter(Position at) {
			return this.stretches.higherKey(at);
		}

		/** How far the stretches walked reach from {@code from}, at most {@code cap}. */
		synchronized Position reach(Position from, Position cap) {
			Position at = from;
			for (Position skip = skip(at); skip != null; skip = skip(at)) {
				at = skip;
			}
			return (at.compareTo(cap) < 0) ? at : cap;
		}

		/**
		 * Records the walk after {@code from} up to {@code through} but the held leases.
		 */
		synchronized void add(Position from, Position through, List<Position> held) {
			List<Position> sorted = new ArrayList<>(held);
			sorted.sort(null);
			Position start = from;
			for (Position lease : sorted) {
				if (lease.compareTo(start) > 0 && lease.compareTo(through) <= 0) {
					put(start, new Position(lease.xid(), lease.id() - 1));
					start = lease;
				}
			}
			put(start, through);
		}

		/** Forgets the stretches the watermark passed. */
		synchronized void forgetThrough(Position watermark) {
			this.stretches.values().removeIf((end) -> end.compareTo(watermark) <= 0);
		}

		/**
		 * Forgets the stretches reaching past {@code cap}, where no transaction of the
		 * server got to: walked on the server the database came from.
		 */
		synchronized void forgetPast(Position cap) {
			while (!this.stretches.isEmpty() && this.stretches.lastEntry().getValue().compareTo(cap) > 0) {
				this.stretches.pollLastEntry();
			}
		}

		private void put(Position start, Position end) {
			if (start.compareTo(end) >= 0) {
				return;
			}
			Position from = start;
			Position to = end;
			Map.Entry<Position, Position> before = this.stretches.floorEntry(from);
			if (before != null && before.getValue().compareTo(from) >= 0) {
				from = before.getKey();
				to = max(to, before.getValue());
				this.stretches.remove(before.getKey());
			}
			for (Map.Entry<Position, Position> after = this.stretches.ceilingEntry(from); after != null
					&& after.getKey().compareTo(to) <= 0; after = this.stretches.ceilingEntry(from)) {
				to = max(to, after.getValue());
				this.stretches.remove(after.getKey());
			}
			this.stretches.put(from, to);
		}

		private static Position max(Position a, Position b) {
			return (a.compareTo(b) >= 0) ? a : b;
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

		/** The last place of the leases taken by transactions below {@code xid}. */
		static Position before(long xid) {
			return new Position(xid - 1, Long.MAX_VALUE);
		}

		@Override
		public int compareTo(Position other) {
			int byXid = Long.compare(this.xid, other.xid);
			return (byXid != 0) ? byXid : Long.compare(this.id, other.id);
		}

	}

}
