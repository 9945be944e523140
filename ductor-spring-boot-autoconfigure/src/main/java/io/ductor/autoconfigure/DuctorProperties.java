package io.ductor.autoconfigure;

import java.time.DateTimeException;
import java.time.Duration;
import java.time.ZoneId;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.scheduling.support.CronExpression;
import org.springframework.util.unit.DataSize;

import io.ductor.effect.AlarmSchedule;
import io.ductor.effect.MissedOccurrences;
import io.ductor.idempotency.DuplicatePolicy;
import io.ductor.idempotency.IdempotencySettings;
import io.ductor.jdbc.SchemaMode;
import io.ductor.observation.DispatchRelation;
import io.ductor.worker.Backoff;

/**
 * Ductor's configuration, under the {@code ductor} prefix. Every value is checked when the
 * application starts; a bad one fails start-up with a message naming the property.
 * <p>
 * Every duration must be positive and at most {@link #MAX_DURATION} (36500d, 100 years): Ductor
 * adds durations to and subtracts them from {@code ductor_now()} in PostgreSQL, whose
 * {@code timestamptz} ends in 4713 BC, and converts them to nanoseconds, which a {@code long}
 * holds for 292 years. To keep finished rows for ever, turn the retention worker off
 * ({@code ductor.retention.enabled=false}) rather than setting a retention of centuries.
 *
 * @param enabled Whether Ductor is enabled. false turns every Ductor bean off.
 * @param schema How Ductor's tables are managed.
 * @param ticks How ticks retry after losing a race for their run.
 * @param retention The worker that purges finished rows past their retention.
 * @param effects How durable effects are recorded and retried.
 * @param drainer The worker that dispatches effect intents.
 * @param reconciler The worker that redrives effect intents whose lease expired.
 * @param idempotency Ingress idempotency: how long reservations and decisions live, and what
 * duplicates of an in-flight request get.
 * @param sweeper The worker that releases pending idempotency reservations past their TTL.
 * @param health Thresholds of the ductor health contributor.
 * @param backlog How the backlog behind health and gauges is read.
 * @param metrics Ductor's Micrometer meters.
 * @param alarms Recurring alarms, by alarm name: each fires an effect on a cron schedule or a
 * fixed period, with one intent per occurrence keyed by the alarm's name and the occurrence's
 * instant.
 * @param alarmScheduler The worker that records the due occurrences of recurring alarms.
 */
@ConfigurationProperties("ductor")
public record DuctorProperties(@DefaultValue("true") boolean enabled, @DefaultValue Schema schema,
		@DefaultValue Ticks ticks, @DefaultValue Retention retention, @DefaultValue Effects effects,
		@DefaultValue Drainer drainer, @DefaultValue Reconciler reconciler, @DefaultValue Idempotency idempotency,
		@DefaultValue Sweeper sweeper, @DefaultValue Health health, @DefaultValue Backlog backlog,
		@DefaultValue Metrics metrics, Map<String, Alarm> alarms, @DefaultValue AlarmScheduler alarmScheduler) {

	public DuctorProperties {
		alarms = (alarms != null) ? Map.copyOf(alarms) : Map.of();
		alarms.forEach((name, alarm) -> alarm.check("ductor.alarms." + name));
	}

	/**
	 * The longest duration any Ductor property accepts: 100 years, far inside what
	 * {@code ductor_now() ± interval} in PostgreSQL and {@link Duration#toNanos()} can hold.
	 */
	public static final Duration MAX_DURATION = Duration.ofDays(36_500);

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
			requireAtLeastOne("ductor.ticks.max-attempts", maxAttempts);
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
			requireBetween("ductor.retention.batch-size", batchSize, 1, 100_000);
		}

	}

	/**
	 * How durable effects are recorded and retried.
	 *
	 * @param maxAttempts Attempts before an intent is marked failed, unless the effect says otherwise.
	 * @param backoff The jittered wait between attempts of an effect.
	 * @param retention How long completed and cancelled intents are kept. Scheduling an effect again
	 * with the same key within this window records nothing new. At most 36500d; to keep them for
	 * ever, set ductor.retention.enabled=false.
	 * @param maxPayloadSize Largest JSON payload of an effect's arguments.
	 * @param overrides Per-effect overrides of max-attempts, backoff and max-concurrency, by effect name.
	 * @param reconcile How the @EffectReconciler of an effect is asked about an attempt whose
	 * outcome is unknown.
	 * @param tracing How the span of a dispatch attempt relates to the span that recorded its
	 * effect, when the application has a tracer.
	 */
	public record Effects(@DefaultValue("10") int maxAttempts, @DefaultValue EffectBackoff backoff,
			@DefaultValue("7d") Duration retention, @DefaultValue("256KB") DataSize maxPayloadSize,
			Map<String, EffectOverride> overrides, @DefaultValue Reconcile reconcile,
			@DefaultValue Tracing tracing) {

		public Effects {
			requireAtLeastOne("ductor.effects.max-attempts", maxAttempts);
			backoff.check("ductor.effects.backoff");
			requirePositive("ductor.effects.retention", retention);
			if (maxPayloadSize.toBytes() < 1 || maxPayloadSize.toBytes() > 64L * 1024 * 1024) {
				throw new IllegalArgumentException(
						"ductor.effects.max-payload-size must be between 1B and 64MB but was " + maxPayloadSize);
			}
			overrides = (overrides != null) ? Map.copyOf(overrides) : Map.of();
			overrides.forEach((name, override) -> override.check("ductor.effects.overrides." + name));
		}

	}

	/**
	 * Tracing of durable effects, when the application has a Micrometer tracer.
	 *
	 * @param dispatchRelation How the span of each dispatch attempt relates to the span that
	 * recorded the effect (read from the trace context stored with the intent): child (the
	 * attempt continues the recording's trace) or link (the attempt starts a new trace with a span
	 * link to the recording's span).
	 * @param observeRecording Whether recording an effect is an observation of its own
	 * (ductor.effect.schedule: a timer, and a span that the attempts are children of). Off, the
	 * intent stores the trace context current where it is recorded (a request's, a tick's span)
	 * and no observation runs per recording; recorded outside any trace, it stores none and each
	 * attempt starts a trace of its own.
	 */
	public record Tracing(@DefaultValue("child") DispatchRelation dispatchRelation,
			@DefaultValue("false") boolean observeRecording) {

	}

	/**
	 * Reconciliation: when an attempt's outcome is unknown (its receiver threw, or its lease expired
	 * after it started) and its effect has an @EffectReconciler, the reconciler worker asks it
	 * whether the receiver applied the attempt, outside any transaction, in rounds.
	 *
	 * @param maxRounds How often the reconciler is asked about one attempt (UNKNOWN, or it threw)
	 * before the intent waits in needs_decision (an IDEMPOTENT one is retried instead). At least 1.
	 * @param backoff The jittered wait before the first round and between rounds. Rounds run at the
	 * reconciler worker's rounds (ductor.reconciler.interval), so a wait shorter than that interval
	 * is rounded up to it.
	 */
	public record Reconcile(@DefaultValue("5") int maxRounds, @DefaultValue ReconcileBackoff backoff) {

		public Reconcile {
			requireBetween("ductor.effects.reconcile.max-rounds", maxRounds, 1, 1_000);
			backoff.check("ductor.effects.reconcile.backoff");
		}

	}

	/**
	 * The backoff between reconciliation rounds.
	 *
	 * @param initial Longest wait before the first round.
	 * @param max Longest wait before any round.
	 * @param multiplier How much the longest wait grows per round. At least 1.
	 */
	public record ReconcileBackoff(@DefaultValue("1s") Duration initial, @DefaultValue("5m") Duration max,
			@DefaultValue("2.0") double multiplier) {

		void check(String prefix) {
			checkBackoff(prefix, this.initial, this.max, this.multiplier);
		}

		Backoff toBackoff() {
			return new Backoff(this.initial, this.max, this.multiplier);
		}

	}

	/**
	 * The backoff between attempts of an effect.
	 *
	 * @param initial Longest wait before the second attempt.
	 * @param max Longest wait before any attempt.
	 * @param multiplier How much the longest wait grows per attempt. At least 1.
	 */
	public record EffectBackoff(@DefaultValue("1s") Duration initial, @DefaultValue("10m") Duration max,
			@DefaultValue("2.0") double multiplier) {

		void check(String prefix) {
			checkBackoff(prefix, this.initial, this.max, this.multiplier);
		}

		Backoff toBackoff() {
			return new Backoff(this.initial, this.max, this.multiplier);
		}

	}

	/**
	 * Overrides for one effect.
	 *
	 * @param maxAttempts Attempts before the effect's intents are marked failed.
	 * @param backoff The wait between attempts of this effect.
	 * @param maxConcurrency The most attempts of this effect that run at once across all
	 * instances; wins over @DurableEffect(maxConcurrency). At least 1.
	 */
	public record EffectOverride(Integer maxAttempts, EffectBackoff backoff, Integer maxConcurrency) {

		void check(String prefix) {
			if (this.maxAttempts != null) {
				requireAtLeastOne(prefix + ".max-attempts", this.maxAttempts);
			}
			if (this.maxConcurrency != null) {
				requireBetween(prefix + ".max-concurrency", this.maxConcurrency, 1, 10_000);
			}
			if (this.backoff != null) {
				this.backoff.check(prefix + ".backoff");
			}
		}

	}

	/**
	 * The drainer: claims due effect intents in batches under a lease and runs them outside the
	 * claiming transaction.
	 *
	 * @param enabled Whether this instance dispatches effect intents.
	 * @param pollInterval How often the drainer looks for due intents when nothing wakes it.
	 * Commits wake it at once; the poll picks up delayed intents, retries and missed wake-ups.
	 * @param batchSize Most intents claimed in one statement.
	 * @param concurrency How many effects run at once in this instance.
	 * @param lease How long a claim lasts without the drainer's heartbeat. After it, the
	 * reconciler hands the intent to another attempt.
	 * @param notifyOnCommit Whether committing a due intent sends pg_notify so drainers of other
	 * instances wake at once.
	 * @param notifyInTransaction Whether that pg_notify is sent inside the committing transaction
	 * instead of right after the commit. Inside, it is delivered atomically with the commit even if
	 * the JVM dies at that moment, but PostgreSQL commits notifying transactions one at a time, which
	 * caps concurrent producers; after the commit, a notification lost with the JVM leaves the intent
	 * to the other instances' next poll.
	 * @param shutdownTimeout How long shutdown waits for running effects before leaving them to
	 * the reconciler.
	 * @param dispatchAtCommit Whether an intent due at commit (no delay, no ordering key, not an
	 * alarm, not recorded by a run's tick) is recorded already claimed by this instance's drainer, when it has room, and handed to
	 * its workers right after the commit, with no wake-up and no claim statement. Other instances
	 * and the reconciler see an ordinary lease. When the drainer is saturated, or this is off,
	 * intents are recorded pending and claimed.
	 */
	public record Drainer(@DefaultValue("true") boolean enabled, @DefaultValue("1s") Duration pollInterval,
			@DefaultValue("100") int batchSize, @DefaultValue("8") int concurrency, @DefaultValue("30s") Duration lease,
			@DefaultValue("true") boolean notifyOnCommit, @DefaultValue("false") boolean notifyInTransaction,
			@DefaultValue("30s") Duration shutdownTimeout, @DefaultValue("true") boolean dispatchAtCommit) {

		public Drainer {
			requirePositive("ductor.drainer.poll-interval", pollInterval);
			requireBetween("ductor.drainer.batch-size", batchSize, 1, 10_000);
			requireBetween("ductor.drainer.concurrency", concurrency, 1, 1_000);
			if (lease.compareTo(Duration.ofSeconds(1)) < 0) {
				throw new IllegalArgumentException("ductor.drainer.lease must be at least 1s but was " + lease);
			}
			requireAtMostMax("ductor.drainer.lease", lease);
			requirePositive("ductor.drainer.shutdown-timeout", shutdownTimeout);
		}

	}

	/**
	 * Ingress idempotency: one decision per (tenant, pool, idempotency key).
	 *
	 * @param pendingTtl How long a two-phase reservation may stay pending before the sweeper
	 * releases it so that a retry runs again. Longer than the slowest two-phase operation.
	 * @param completedTtl How long a completed decision is replayed to repeated requests; after
	 * it the same key runs again.
	 * @param retention How long settled records are kept after their last change before the
	 * retention worker deletes them. Not shorter than the completed TTL, at most 36500d; to keep
	 * them for ever, set ductor.retention.enabled=false.
	 * @param duplicatePolicy What a request gets while another request with its key is in flight:
	 * wait for its outcome (wait) or an in-flight error at once (reject).
	 * @param waitTimeout The longest a duplicate waits under the wait policy before it gets an
	 * in-flight error.
	 * @param pollInterval How often a waiting duplicate looks again when no notification woke it.
	 * @param headerName The HTTP request header that carries the idempotency key.
	 * @param maxRequestSize Largest request an @Idempotent endpoint accepts: its body (by
	 * Content-Length when declared), the sum of its multipart parts or the bytes of its form
	 * parameters. The body is read into memory for the fingerprint, so a larger request gets 413
	 * before the handler runs and nothing is stored. At most 1GB.
	 * @param maxResponseSize Largest response body of an @Idempotent handler that is stored for
	 * replay; never more is buffered. A larger response rolls a one-transaction decision back (a
	 * 500 problem answers) and, in two-phase mode, is sent but not stored. At most 1GB (the
	 * largest bytea PostgreSQL stores).
	 */
	public record Idempotency(@DefaultValue("5m") Duration pendingTtl, @DefaultValue("24h") Duration completedTtl,
			@DefaultValue("7d") Duration retention, @DefaultValue("wait") DuplicatePolicy duplicatePolicy,
			@DefaultValue("10s") Duration waitTimeout, @DefaultValue("1s") Duration pollInterval,
			@DefaultValue("Idempotency-Key") String headerName, @DefaultValue("1MB") DataSize maxRequestSize,
			@DefaultValue("1MB") DataSize maxResponseSize) {

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
			if (maxRequestSize.toBytes() < 1 || maxRequestSize.toBytes() > 1024L * 1024 * 1024) {
				throw new IllegalArgumentException(
						"ductor.idempotency.max-request-size must be between 1B and 1GB but was " + maxRequestSize);
			}
			if (maxResponseSize.toBytes() < 1 || maxResponseSize.toBytes() > 1024L * 1024 * 1024) {
				throw new IllegalArgumentException(
						"ductor.idempotency.max-response-size must be between 1B and 1GB but was " + maxResponseSize);
			}
		}

		IdempotencySettings toSettings() {
			return new IdempotencySettings(this.pendingTtl, this.completedTtl, this.duplicatePolicy, this.waitTimeout,
					this.pollInterval);
		}

	}

	/**
	 * The reconciler: redrives in-flight intents whose lease expired.
	 *
	 * @param enabled Whether the reconciler runs in this instance.
	 * @param interval Pause between reconciler rounds.
	 * @param batchSize Most intents redriven in one statement.
	 */
	public record Reconciler(@DefaultValue("true") boolean enabled, @DefaultValue("5s") Duration interval,
			@DefaultValue("500") int batchSize) {

		public Reconciler {
			requirePositive("ductor.reconciler.interval", interval);
			requireBetween("ductor.reconciler.batch-size", batchSize, 1, 100_000);
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

	/**
	 * Thresholds that turn the ductor health contributor DOWN. Both are off unless set.
	 *
	 * @param maxOldestAge DOWN when the oldest due effect intent has waited longer than this.
	 * Unset: never.
	 * @param maxParked DOWN when more effect intents than this are failed or need a decision.
	 * Unset: never.
	 */
	public record Health(Duration maxOldestAge, Integer maxParked) {

		public Health {
			if (maxOldestAge != null) {
				requirePositive("ductor.health.max-oldest-age", maxOldestAge);
			}
			if (maxParked != null && maxParked < 0) {
				throw new IllegalArgumentException("ductor.health.max-parked must not be negative but was " + maxParked);
			}
		}

	}

	/**
	 * How the backlog shown by health and gauges is read.
	 *
	 * @param cacheTtl How long gauges reuse one backlog snapshot, so a scrape costs at most one
	 * query. Health checks always read a fresh one.
	 * @param countLimit Most index entries one count reads. Above it, the pending count is
	 * PostgreSQL's estimate and the other counts stop at the limit.
	 */
	public record Backlog(@DefaultValue("5s") Duration cacheTtl, @DefaultValue("10000") int countLimit) {

		public Backlog {
			requirePositive("ductor.backlog.cache-ttl", cacheTtl);
			requireBetween("ductor.backlog.count-limit", countLimit, 1, 10_000_000);
		}

	}

	/**
	 * One recurring alarm. Exactly one of cron and every is set.
	 *
	 * @param cron A Spring cron expression, six fields with seconds first ("0 0 9 * * MON-FRI"),
	 * read in the zone.
	 * @param every A fixed period instead of a cron expression: the occurrences are the whole
	 * multiples of it since 1970-01-01T00:00:00Z (every=1h fires at the top of each UTC hour).
	 * @param zone The time zone of the cron expression, a java.time zone id ("Europe/Berlin").
	 * @param effect The name of the @DurableEffect each occurrence runs.
	 * @param arguments The effect's arguments, one per parameter: a String parameter takes the text,
	 * any other parameter reads it as JSON (42, true, {"sku": "book-1"}).
	 * @param missed What happens to occurrences reached more than the grace after their instant
	 * (every instance was down): run-once (one occurrence, keyed by the first missed instant, runs
	 * for all of them), run-each (each runs) or skip (none runs).
	 * @param grace How late an occurrence may be reached and still count as on time.
	 */
	public record Alarm(String cron, Duration every, @DefaultValue("UTC") String zone, String effect,
			List<String> arguments, @DefaultValue("run-once") MissedOccurrences missed,
			@DefaultValue("1m") Duration grace) {

		public Alarm {
			arguments = (arguments != null) ? List.copyOf(arguments) : List.of();
		}

		void check(String prefix) {
			if ((this.cron == null) == (this.every == null)) {
				throw new IllegalArgumentException(prefix + " must set exactly one of " + prefix + ".cron and "
						+ prefix + ".every but " + ((this.cron == null) ? "set neither" : "set both"));
			}
			if (this.effect == null || this.effect.isBlank()) {
				throw new IllegalArgumentException(prefix + ".effect must name the @DurableEffect the alarm runs");
			}
			if (this.cron != null && !CronExpression.isValidExpression(this.cron)) {
				String reason;
				try {
					CronExpression.parse(this.cron);
					reason = "";
				}
				catch (IllegalArgumentException ex) {
					reason = ": " + ex.getMessage();
				}
				throw new IllegalArgumentException(prefix + ".cron is not a valid cron expression (six fields, seconds "
						+ "first, as \"0 0 9 * * *\") but was '" + this.cron + "'" + reason);
			}
			if (this.every != null) {
				requirePositive(prefix + ".every", this.every);
				if (this.every.toNanos() % 1_000_000 != 0) {
					throw new IllegalArgumentException(prefix + ".every must be a whole number of milliseconds but was "
							+ this.every);
				}
			}
			try {
				ZoneId.of(this.zone);
			}
			catch (DateTimeException ex) {
				throw new IllegalArgumentException(prefix + ".zone is not a known time zone id (such as Europe/Berlin"
						+ " or UTC) but was '" + this.zone + "'");
			}
			if (this.grace.isNegative()) {
				throw new IllegalArgumentException(prefix + ".grace must not be negative but was " + this.grace);
			}
			requireAtMostMax(prefix + ".grace", this.grace);
		}

		AlarmSchedule toSchedule() {
			AlarmSchedule schedule = (this.cron != null) ? AlarmSchedule.cron(this.cron, ZoneId.of(this.zone))
					: AlarmSchedule.every(this.every);
			return schedule.withMissed(this.missed).withGrace(this.grace);
		}

	}

	/**
	 * The recurring-alarm scheduler: records the due occurrences of recurring alarms. Safe in every
	 * instance at once: each round locks the due alarms it handles with SKIP LOCKED.
	 *
	 * @param enabled Whether the scheduler runs in this instance.
	 * @param interval Pause between rounds: how late, at most, an occurrence is recorded.
	 * @param batchSize Most due alarms handled in one transaction.
	 */
	public record AlarmScheduler(@DefaultValue("true") boolean enabled, @DefaultValue("1s") Duration interval,
			@DefaultValue("100") int batchSize) {

		public AlarmScheduler {
			requirePositive("ductor.alarm-scheduler.interval", interval);
			requireBetween("ductor.alarm-scheduler.batch-size", batchSize, 1, 10_000);
		}

	}

	/**
	 * Ductor's Micrometer meters.
	 *
	 * @param enabled Whether Ductor registers its meters when Micrometer is present.
	 */
	public record Metrics(@DefaultValue("true") boolean enabled) {
	}

	static void requireAtLeastOne(String property, int value) {
		if (value < 1) {
			throw new IllegalArgumentException(property + " must be at least 1 but was " + value);
		}
	}

	static void requireBetween(String property, int value, int min, int max) {
		if (value < min || value > max) {
			throw new IllegalArgumentException(property + " must be between " + min + " and " + max + " but was " + value);
		}
	}

	static void checkBackoff(String prefix, Duration initial, Duration max, double multiplier) {
		requirePositive(prefix + ".initial", initial);
		requireAtMostMax(prefix + ".max", max);
		if (max.compareTo(initial) < 0) {
			throw new IllegalArgumentException(prefix + ".max must not be shorter than " + prefix + ".initial ("
					+ initial + ") but was " + max);
		}
		if (!(multiplier >= 1.0) || Double.isInfinite(multiplier)) {
			throw new IllegalArgumentException(prefix + ".multiplier must be at least 1 but was " + multiplier);
		}
	}

	/** Checks that {@code value} is positive and at most {@link #MAX_DURATION}. */
	static void requirePositive(String property, Duration value) {
		if (value.isNegative() || value.isZero()) {
			throw new IllegalArgumentException(property + " must be positive but was " + value);
		}
		requireAtMostMax(property, value);
	}

	static void requireAtMostMax(String property, Duration value) {
		if (value.compareTo(MAX_DURATION) > 0) {
			String forEver = property.endsWith(".retention")
					? "; to keep rows for ever, set ductor.retention.enabled=false instead" : "";
			throw new IllegalArgumentException(property + " must be at most 36500d (100 years), the longest duration"
					+ " Ductor accepts, but was " + describe(value) + forEver);
		}
	}

	/** A duration as a user would have written it: {@code 3650000d} for whole days. */
	private static String describe(Duration value) {
		boolean wholeDays = value.getNano() == 0 && value.getSeconds() % Duration.ofDays(1).getSeconds() == 0;
		return wholeDays ? value.toDays() + "d" : value.toString();
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
			checkBackoff(prefix, this.initial, this.max, this.multiplier);
		}

		Backoff toBackoff() {
			return new Backoff(this.initial, this.max, this.multiplier);
		}

	}

}
