package io.ductor.worker.internal;

import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Exponential backoff with jitter: the n-th retry waits between half and all of
 * {@code min(max, initial * multiplier^(n-1))}, so competing retries spread out instead
 * of colliding again at the same instant.
 *
 * @param initial the ceiling of the first delay
 * @param max the largest ceiling
 * @param multiplier how much the ceiling grows per retry
 */
public record Backoff(Duration initial, Duration max, double multiplier) {

	/**
	 * The delay before retry number {@code retry} (1 for the first retry).
	 * @param retry the retry number, at least 1
	 * @return the delay
	 */
	public Duration delay(int retry) {
		double ceiling = Math.min(this.max.toNanos(),
				this.initial.toNanos() * Math.pow(this.multiplier, Math.max(0, retry - 1)));
		long half = (long) (ceiling / 2);
		return Duration.ofNanos(half + ThreadLocalRandom.current().nextLong(half + 1));
	}

}
