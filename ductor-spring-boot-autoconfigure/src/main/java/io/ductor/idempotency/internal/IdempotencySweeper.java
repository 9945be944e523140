package io.ductor.idempotency.internal;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import io.ductor.idempotency.ReleaseReason;
import io.ductor.metrics.internal.DuctorObserver;
import io.ductor.worker.internal.WorkerTask;

/**
 * The sweeper's round: pending reservations past {@code ductor.idempotency.pending-ttl}
 * (their owner crashed, hung or lost its connection) become {@code failed_before_commit},
 * so that a retry with the same key can reclaim them; their waiting duplicates are
 * notified. Rows locked by a concurrent statement are skipped and swept next round, so
 * several instances can sweep at once.
 * <p>
 * Only two-phase reservations ({@code @Idempotent(mode = TWO_PHASE)},
 * {@link IdempotencyService#execute}) are ever pending in the table: a one-transaction
 * reservation commits together with its decision or not at all. A swept two-phase
 * reservation is the documented crash window of that mode: its owner may have committed
 * its work before it stopped, and the retry runs it again. Every sweep that releases
 * something is logged as a warning and counted as
 * {@code ductor.idempotency.released{reason=swept}}.
 */
public class IdempotencySweeper implements WorkerTask {

	private static final Log logger = LogFactory.getLog(IdempotencySweeper.class);

	private final IdempotencyStore store;

	private final int batchSize;

	private final DuctorObserver observer;

	/**
	 * Create the sweeper's task, counting its releases.
	 * @param store the SQL of idempotency records
	 * @param batchSize the most reservations released per transaction
	 * @param observer told about every release
	 */
	public IdempotencySweeper(IdempotencyStore store, int batchSize, DuctorObserver observer) {
		if (batchSize < 1) {
			throw new IllegalArgumentException("batchSize must be at least 1 but was " + batchSize);
		}
		this.store = store;
		this.batchSize = batchSize;
		this.observer = observer;
	}

	/**
	 * Release one batch of expired reservations.
	 * @return how many were released
	 */
	public int sweep() {
		int released = this.store.sweep(this.batchSize);
		if (released > 0) {
			this.observer.released(ReleaseReason.SWEPT.tag(), released);
			logger.warn("Released " + released + " two-phase idempotency reservation(s) pending longer than"
					+ " ductor.idempotency.pending-ttl: their owner stopped before settling them, and a retry with"
					+ " their key runs again (the owner's work may have committed: the two-phase crash window)");
		}
		return released;
	}

	@Override
	public boolean runOnce() {
		return sweep() >= this.batchSize;
	}

}
