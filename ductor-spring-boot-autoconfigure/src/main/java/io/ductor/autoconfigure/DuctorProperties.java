package io.ductor.autoconfigure;

import java.time.Duration;
import java.util.regex.Pattern;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

import io.ductor.idempotency.DuplicatePolicy;
import io.ductor.idempotency.IdempotencySettings;
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
 * @param idempotency Ingress idempotency: how long reservations and decisions live, and what
 * duplicates of an in-flight request get.
 * @param sweeper The worker that releases pending idempotency reservations past their TTL.
 */
@ConfigurationProperties("ductor")
public record DuctorProperties(@DefaultValue("true") boolean enabled, @DefaultValue Schema schema,
		@DefaultValue Ticks ticks, @DefaultValue Retention retention, @DefaultValue Idempotency idempotency,
		@DefaultValue Sweeper sweeper) {

	/** An HTTP field name: an RFC 9110 token. */
	private static final Pattern HEADER_NAME = Pattern.compile("[A-Za-z0-9!#$%&'*+.^_`|~-]+");

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

	/**
	 * Ingress idempotency: one decision per (tenant, pool, idempotency key).
	 *
	 * @param pendingTtl How long a reservation may stay pending before the sweeper releases it so
	 * that a retry runs again. Longer than the slowest protected operation.
	 * @param completedTtl How long a completed decision is replayed to repeated requests; after
	 * it the same key runs again.
	 * @param retention How long settled records are kept after their last change before the
	 * retention worker deletes them. Not shorter than the completed TTL.
	 * @param duplicatePolicy What a request gets while another request with its key is in flight:
	 * wait for its outcome (wait) or an in-flight error at once (reject).
	 * @param waitTimeout The longest a duplicate waits under the wait policy before it gets an
	 * in-flight error.
	 * @param pollInterval How often a waiting duplicate looks again when no notification woke it.
	 * @param headerName The HTTP request header that carries the idempotency key.
	 */
	public record Idempotency(@DefaultValue("5m") Duration pendingTtl, @DefaultValue("24h") Duration completedTtl,
			@DefaultValue("7d") Duration retention, @DefaultValue("wait") DuplicatePolicy duplicatePolicy,
			@DefaultValue("10s") Duration waitTimeout, @DefaultValue("1s") Duration pollInterval,
			@DefaultValue("Idempotency-Key") String headerName) {

		public Idempotency {
			requirePositive("ductor.idempotency.pending-ttl", pendingTtl);
			requirePositive("ductor.idempotency.completed-ttl", completedTtl);
			requirePositive("ductor.idempotency.retention", retention);
			requirePositive("ductor.idempotency.wait-timeout", waitTimeout);
			requirePositive("ductor.idempotency.poll-interval", pollInterval);
			if (retention.compareTo(completedTtl) < 0) {
				throw new IllegalArgumentException("ductor.idempotency.retention must not be shorter than"
						+ " ductor.idempotency.completed-ttl (" + completedTtl + ") but was " + retention);
			}
			if (duplicatePolicy == DuplicatePolicy.DEFAULT) {
				throw new IllegalArgumentException(
						"ductor.idempotency.duplicate-policy must be wait or reject but was default");
			}
			if (headerName == null || !HEADER_NAME.matcher(headerName).matches()) {
				throw new IllegalArgumentException(
						"ductor.idempotency.header-name must be an HTTP header name (letters, digits and"
								+ " !#$%&'*+-.^_`|~) but was '" + headerName + "'");
			}
		}

		IdempotencySettings toSettings() {
			return new IdempotencySettings(this.pendingTtl, this.completedTtl, this.duplicatePolicy, this.waitTimeout,
					this.pollInterval);
		}

	}

	/**
	 * The sweeper: releases pending idempotency reservations whose owner never settled them
	 * (to failed_before_commit), so that a retry can run again.
	 *
	 * @param enabled Whether the sweeper runs in this instance.
	 * @param interval Pause between sweeps.
	 */
	public record Sweeper(@DefaultValue("true") boolean enabled, @DefaultValue("30s") Duration interval) {

		public Sweeper {
			requirePositive("ductor.sweeper.interval", interval);
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
