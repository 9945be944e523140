package io.ductor.idempotency.internal;

import java.time.Duration;

import io.ductor.idempotency.DuplicatePolicy;

/**
 * How {@link IdempotencyService} keeps and waits for its records.
 *
 * @param pendingTtl how long a two-phase reservation may stay pending before the sweeper
 * releases it (to {@code failed_before_commit}); longer than the slowest protected
 * operation (one-transaction reservations are never pending in the table)
 * @param completedTtl how long a completed decision is replayed; after it the key runs
 * again
 * @param duplicatePolicy what a duplicate of an in-flight request gets by default (never
 * {@link DuplicatePolicy#DEFAULT})
 * @param waitTimeout the longest a duplicate waits under {@link DuplicatePolicy#WAIT}
 * @param pollInterval how often a waiting duplicate looks again when no notification woke
 * it
 * @param lockKeys the advisory lock of each key ({@link LockKeys#SHA256}; tests choose
 * colliding ones)
 */
public record IdempotencySettings(Duration pendingTtl, Duration completedTtl, DuplicatePolicy duplicatePolicy,
		Duration waitTimeout, Duration pollInterval, LockKeys lockKeys) {

	public IdempotencySettings {
		if (lockKeys == null) {
			throw new IllegalArgumentException("lockKeys must not be null");
		}
		if (duplicatePolicy == null || duplicatePolicy == DuplicatePolicy.DEFAULT) {
			throw new IllegalArgumentException("duplicatePolicy must be WAIT or REJECT but was " + duplicatePolicy);
		}
		requirePositive("pendingTtl", pendingTtl);
		requirePositive("completedTtl", completedTtl);
		requirePositive("waitTimeout", waitTimeout);
		requirePositive("pollInterval", pollInterval);
	}

	/**
	 * The settings with every key's own 64-bit advisory lock.
	 */
	public IdempotencySettings(Duration pendingTtl, Duration completedTtl, DuplicatePolicy duplicatePolicy,
			Duration waitTimeout, Duration pollInterval) {
		this(pendingTtl, completedTtl, duplicatePolicy, waitTimeout, pollInterval, LockKeys.SHA256);
	}

	/**
	 * @param lockKeys the advisory lock of each key
	 * @return these settings with other advisory locks
	 */
	public IdempotencySettings withLockKeys(LockKeys lockKeys) {
		return new IdempotencySettings(this.pendingTtl, this.completedTtl, this.duplicatePolicy, this.waitTimeout,
				this.pollInterval, lockKeys);
	}

	/**
	 * @return five minutes pending, a day completed, {@code WAIT} up to ten seconds,
	 * polling every second
	 */
	public static IdempotencySettings defaults() {
		return new IdempotencySettings(Duration.ofMinutes(5), Duration.ofHours(24), DuplicatePolicy.WAIT,
				Duration.ofSeconds(10), Duration.ofSeconds(1));
	}

	private static void requirePositive(String name, Duration value) {
		if (value == null || value.isNegative() || value.isZero()) {
			throw new IllegalArgumentException(name + " must be positive but was " + value);
		}
	}

	/**
	 * @param policy a per-call choice
	 * @return {@code policy}, or the configured one for {@link DuplicatePolicy#DEFAULT}
	 */
	public DuplicatePolicy resolve(DuplicatePolicy policy) {
		return (policy == null || policy == DuplicatePolicy.DEFAULT) ? this.duplicatePolicy : policy;
	}

}
