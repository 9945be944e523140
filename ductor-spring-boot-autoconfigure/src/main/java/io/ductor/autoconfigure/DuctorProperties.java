package io.ductor.autoconfigure;

import java.time.Duration;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

import io.ductor.jdbc.SchemaMode;
import io.ductor.worker.Backoff;

/**
 * Ductor's configuration, under the {@code ductor} prefix. Every value is checked when the
 * application starts; a bad one fails start-up with a message naming the property.
 *
 * @param enabled Whether Ductor is enabled. false turns every Ductor bean off.
 * @param schema How Ductor's tables are managed.
 * @param ticks How ticks retry after losing a race for their run.
 * @param retention The worker that purges finished rows past their retention.
 */
@ConfigurationProperties("ductor")
public record DuctorProperties(@DefaultValue("true") boolean enabled, @DefaultValue Schema schema,
		@DefaultValue Ticks ticks, @DefaultValue Retention retention) {

	/**
	 * How Ductor's tables are managed.
	 *
	 * @param mode Whether Ductor applies its Flyway migrations at start-up (migrate), only checks
	 * that they have been applied (validate), or leaves the schema alone (none).
	 */
	public record Schema(@DefaultValue("migrate") SchemaMode mode) {
	}

	/**
	 * How ticks retry after a concurrent tick advanced their run first.
	 *
	 * @param maxAttempts How often a tick is computed before it gives up with a
	 * TickConflictException. At least 1.
	 * @param backoff The jittered wait between attempts.
	 */
	public record Ticks(@DefaultValue("20") int maxAttempts, @DefaultValue RetryBackoff backoff) {

		public Ticks {
			if (maxAttempts < 1) {
				throw new IllegalArgumentException(
						"ductor.ticks.max-attempts must be at least 1 but was " + maxAttempts);
			}
			backoff.check("ductor.ticks.backoff");
		}

	}

	/**
	 * The retention worker: deletes finished rows past their retention (set per feature) in
	 * small batches, each in a short transaction of its own.
	 *
	 * @param enabled Whether the retention worker runs in this instance.
	 * @param interval Pause between purge rounds.
	 * @param batchSize Most rows deleted per table in one transaction.
	 */
	public record Retention(@DefaultValue("true") boolean enabled, @DefaultValue("1m") Duration interval,
			@DefaultValue("1000") int batchSize) {

		public Retention {
			requirePositive("ductor.retention.interval", interval);
			if (batchSize < 1 || batchSize > 100_000) {
				throw new IllegalArgumentException(
						"ductor.retention.batch-size must be between 1 and 100000 but was " + batchSize);
			}
		}

	}

	static void requirePositive(String property, Duration value) {
		if (value.isNegative() || value.isZero()) {
			throw new IllegalArgumentException(property + " must be positive but was " + value);
		}
	}

	/**
	 * An exponential backoff: the n-th retry waits a random time between half and all of
	 * {@code min(max, initial * multiplier^(n-1))}.
	 *
	 * @param initial Longest wait before the first retry.
	 * @param max Longest wait before any retry.
	 * @param multiplier How much the longest wait grows per retry. At least 1.
	 */
	public record RetryBackoff(@DefaultValue("5ms") Duration initial, @DefaultValue("200ms") Duration max,
			@DefaultValue("2.0") double multiplier) {

		void check(String prefix) {
			requirePositive(prefix + ".initial", this.initial);
			if (this.max.compareTo(this.initial) < 0) {
				throw new IllegalArgumentException(
						prefix + ".max must not be shorter than " + prefix + ".initial (" + this.initial + ") but was "
								+ this.max);
			}
			if (!(this.multiplier >= 1.0) || Double.isInfinite(this.multiplier)) {
				throw new IllegalArgumentException(prefix + ".multiplier must be at least 1 but was " + this.multiplier);
			}
		}

		Backoff toBackoff() {
			return new Backoff(this.initial, this.max, this.multiplier);
		}

	}

}
