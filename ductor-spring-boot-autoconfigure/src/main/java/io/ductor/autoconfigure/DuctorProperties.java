package io.ductor.autoconfigure;

import java.time.Duration;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.NestedConfigurationProperty;
import org.springframework.boot.context.properties.bind.DefaultValue;

import io.ductor.autoconfigure.internal.PropertyChecks;
import io.ductor.jdbc.SchemaMode;

/**
 * Ductor's core configuration, under the {@code ductor} prefix: what every feature
 * shares. Each feature has its own properties beside its auto-configuration
 * ({@code ductor.effects.*}, {@code ductor.idempotency.*}, {@code ductor.health.*},
 * {@code ductor.metrics.*}). Every value is checked when the application starts; a bad
 * one fails start-up with a message naming the property.
 * <p>
 * Every duration must be positive and at most {@link #MAX_DURATION} (36500d, 100 years):
 * Ductor adds durations to and subtracts them from {@code ductor_now()} in PostgreSQL,
 * whose {@code timestamptz} ends in 4713 BC, and converts them to nanoseconds, which a
 * {@code long} holds for 292 years. To keep finished rows for ever, turn the retention
 * worker off ({@code ductor.retention.enabled=false}) rather than setting a retention of
 * centuries.
 *
 * @param enabled Whether Ductor is enabled. false turns every Ductor bean off.
 * @param schema How Ductor's tables are managed.
 * @param ticks How ticks retry after losing a race for their run.
 * @param retention The worker that purges finished rows past their retention.
 * @param backlog How the backlog behind health and gauges is read.
 * @param shutdownTimeout How long Ductor's stop may take in all, from its first component
 * stopping to its last thread ending: running effects, their outcomes, the rounds of the
 * periodic workers and the notification listener share this one deadline; what is still
 * running then is interrupted, and the reconciler redrives the effects it cut off.
 */
@ConfigurationProperties("ductor")
public record DuctorProperties(@DefaultValue("true") boolean enabled, @DefaultValue Schema schema,
		@DefaultValue Ticks ticks, @DefaultValue Retention retention, @DefaultValue Backlog backlog,
		@DefaultValue("30s") Duration shutdownTimeout) {

	public DuctorProperties {
		PropertyChecks.requirePositive("ductor.shutdown-timeout", shutdownTimeout);
	}

	/**
	 * The longest duration any Ductor property accepts: 100 years, far inside what
	 * {@code ductor_now() ± interval} in PostgreSQL and {@link Duration#toNanos()} can
	 * hold.
	 */
	public static final Duration MAX_DURATION = PropertyChecks.MAX_DURATION;

	/**
	 * How Ductor's tables are managed.
	 *
	 * @param mode Whether Ductor applies its Flyway migrations at start-up (migrate),
	 * only checks that they have been applied (validate), or leaves the schema alone
	 * (none).
	 */
	public record Schema(@DefaultValue("migrate") SchemaMode mode) {
	}

	/**
	 * How ticks retry after a concurrent tick advanced their run first.
	 *
	 * @param maxAttempts How often a tick is computed before it gives up with a
	 * TickConflictException. At least 1.
	 * @param backoff The jittered wait between attempts (defaults: initial 5ms, max
	 * 200ms, multiplier 2.0).
	 */
	public record Ticks(@DefaultValue("20") int maxAttempts, @NestedConfigurationProperty BackoffProperties backoff) {

		static final BackoffProperties DEFAULT_BACKOFF = new BackoffProperties(Duration.ofMillis(5),
				Duration.ofMillis(200), 2.0);

		public Ticks {
			PropertyChecks.requireAtLeastOne("ductor.ticks.max-attempts", maxAttempts);
			backoff = BackoffProperties.orDefaults(backoff, DEFAULT_BACKOFF, "ductor.ticks.backoff");
		}

	}

	/**
	 * The retention worker: deletes finished rows past their retention (set per feature)
	 * in small batches, each in a short transaction of its own.
	 *
	 * @param enabled Whether the retention worker runs in this instance.
	 * @param interval Pause between purge rounds.
	 * @param batchSize Most rows deleted per table in one transaction.
	 */
	public record Retention(@DefaultValue("true") boolean enabled, @DefaultValue("1m") Duration interval,
			@DefaultValue("1000") int batchSize) {

		public Retention {
			PropertyChecks.requirePositive("ductor.retention.interval", interval);
			PropertyChecks.requireBetween("ductor.retention.batch-size", batchSize, 1, 100_000);
		}

	}

	/**
	 * How the backlog shown by health and gauges is read.
	 *
	 * @param cacheTtl How long gauges reuse one backlog snapshot, so a scrape costs at
	 * most one query. Health checks always read a fresh one.
	 * @param countLimit Most index entries one count reads. Above it, the pending count
	 * is PostgreSQL's estimate and the other counts stop at the limit.
	 */
	public record Backlog(@DefaultValue("5s") Duration cacheTtl, @DefaultValue("10000") int countLimit) {

		public Backlog {
			PropertyChecks.requirePositive("ductor.backlog.cache-ttl", cacheTtl);
			PropertyChecks.requireBetween("ductor.backlog.count-limit", countLimit, 1, 10_000_000);
		}

	}

}
