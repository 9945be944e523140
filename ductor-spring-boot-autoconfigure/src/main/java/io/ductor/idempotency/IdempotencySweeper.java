package io.ductor.idempotency;

import javax.sql.DataSource;

import io.ductor.worker.WorkerTask;

/**
 * The sweeper's round: pending reservations past {@code ductor.idempotency.pending-ttl} (their
 * owner crashed, hung or lost its connection) become {@code failed_before_commit}, so that a
 * retry with the same key can reclaim them; their waiting duplicates are notified. Rows locked by
 * a concurrent statement are skipped and swept next round, so several instances can sweep at
 * once.
 */
public class IdempotencySweeper implements WorkerTask {

	private final IdempotencyStore store;

	private final int batchSize;

	/**
	 * Create the sweeper's task.
	 * @param dataSource the database holding Ductor's tables
	 * @param batchSize the most reservations released per transaction
	 */
	public IdempotencySweeper(DataSource dataSource, int batchSize) {
		if (batchSize < 1) {
			throw new IllegalArgumentException("batchSize must be at least 1 but was " + batchSize);
		}
		this.store = new IdempotencyStore(dataSource);
		this.batchSize = batchSize;
	}

	/**
	 * Release one batch of expired reservations.
	 * @return how many were released
	 */
	public int sweep() {
		return this.store.sweep(this.batchSize);
	}

	@Override
	public boolean runOnce() {
		return sweep() >= this.batchSize;
	}

}
