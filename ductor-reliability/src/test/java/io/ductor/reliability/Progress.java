package io.ductor.reliability;

import java.time.Duration;

import org.awaitility.Awaitility;

/**
 * Waits until the workload shows progress of every kind after a fault: a new tick
 * committed, a new effect applied at the receiver and a new idempotent request answered.
 */
final class Progress {

	private final Invariants db;

	private final OrderClient orders;

	private final long transitions;

	private final long applied;

	private final long answered;

	Progress(Invariants db, OrderClient orders) {
		this.db = db;
		this.orders = orders;
		this.transitions = db.count("SELECT count(*) FROM eec_run_transition");
		this.applied = db.count("SELECT count(*) FROM wl_dedup_receiver");
		this.answered = (orders != null) ? orders.answered.size() : 0;
	}

	/**
	 * @return how long it took from {@code since} (a {@link System#nanoTime()})
	 */
	Duration await(long since, Duration timeout, String what) throws InterruptedException {
		Awaitility.await("progress after " + what)
			.atMost(timeout)
			.pollDelay(Duration.ZERO)
			.pollInterval(Duration.ofMillis(25))
			// the driver's own connection may be failing too (database restart): look
			// again
			.ignoreExceptionsInstanceOf(RuntimeException.class)
			.until(this::progressed);
		return Duration.ofNanos(System.nanoTime() - since);
	}

	private boolean progressed() {
		return this.db.count("SELECT count(*) FROM eec_run_transition") > this.transitions
				&& this.db.count("SELECT count(*) FROM wl_dedup_receiver") > this.applied
				&& (this.orders == null || this.orders.answered.size() > this.answered);
	}

}
