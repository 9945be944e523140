package io.ductor.internal;

/**
 * Which intents are in flight, for the readers outside the effect storage (the backlog
 * metrics, the console): every attempt under a lease the lease index watches, and every
 * lease the reconciler's sweep has not walked past yet.
 */
public final class InFlightIntents {

	private InFlightIntents() {
	}

	/**
	 * The sweep's watermark: the transaction id every lease it watches is at or past; 0
	 * while it is one no transaction of the server reached (the database came from a
	 * server whose ids ran higher, until the sweep's next round moves it back).
	 */
	public static final String SWEEP_WATERMARK_SQL = """
			SELECT CASE WHEN lease_xid < pg_snapshot_xmax(pg_current_snapshot())::text::bigint THEN lease_xid ELSE 0 END
			FROM eec_effect_lease_sweep WHERE name = 'intents'""";

	/**
	 * {@code IntentReads.IN_FLIGHT} with the sweep's watermark read beforehand
	 * ({@link #SWEEP_WATERMARK_SQL}) and written into the condition: the planner then
	 * knows how few leases are past it (compared with a value it cannot see, it expects a
	 * third of the table and plans a parallel scan).
	 * @param watermark the watermark's transaction id
	 * @return the condition
	 */
	public static String inFlight(long watermark) {
		return "status = 'in_flight' AND (queue_lease_expires_at IS NOT NULL OR lease_xid >= " + watermark + ")";
	}

	/**
	 * How many intents are in flight, up to {@code :cap}, as two counts that never meet:
	 * the lease index's entries, read from the index alone (its column is set only for an
	 * in-flight attempt the index watches, so no row need be visited), and the leases of
	 * the sweep past its watermark that are still in flight. Counting with
	 * {@link #inFlight(long)} visits the row of every attempt in flight to read its
	 * status: one page each.
	 * @param watermark the watermark's transaction id
	 * @return a scalar expression
	 */
	public static String count(long watermark) {
		return """
				LEAST(:cap, (SELECT count(*) FROM (SELECT 1 FROM eec_effect_intent WHERE queue_lease_expires_at IS NOT NULL
				                 ORDER BY queue_lease_expires_at LIMIT :cap) x)
				    + (SELECT count(*) FROM (SELECT 1 FROM eec_effect_intent WHERE lease_xid >= %d
				                 AND status = 'in_flight' AND lease_swept LIMIT :cap) x))"""
			.formatted(watermark);
	}

}
