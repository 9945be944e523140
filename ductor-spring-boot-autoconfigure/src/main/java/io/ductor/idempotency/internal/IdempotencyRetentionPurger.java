package io.ductor.idempotency.internal;

import java.time.Duration;

import javax.sql.DataSource;

import io.ductor.worker.internal.RetentionPurger;

/**
 * Retention for idempotency records: deletes {@code completed} and
 * {@code failed_before_commit} rows last changed more than
 * {@code ductor.idempotency.retention} ago (and no longer replayed), oldest first, one
 * bounded batch per short statement, skipping rows locked by a concurrent reservation.
 * Pending rows are never purged; the sweeper settles them first.
 */
public class IdempotencyRetentionPurger implements RetentionPurger {

	private final IdempotencyStore store;

	private final Duration retention;

	/**
	 * Create the purger.
	 * @param dataSource the database holding Ductor's tables
	 * @param retention how long settled rows are kept after their last change
	 */
	public IdempotencyRetentionPurger(DataSource dataSource, Duration retention) {
		if (retention.isNegative() || retention.isZero()) {
			throw new IllegalArgumentException("retention must be positive but was " + retention);
		}
		this.store = new IdempotencyStore(dataSource);
		this.retention = retention;
	}

	@Override
	public int purge(int batchSize) {
		return this.store.purge(this.retention, batchSize);
	}

}
