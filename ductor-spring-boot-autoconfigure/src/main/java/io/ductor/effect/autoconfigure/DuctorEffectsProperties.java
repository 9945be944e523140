package io.ductor.effect.autoconfigure;

import java.time.Duration;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.NestedConfigurationProperty;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.util.unit.DataSize;

import io.ductor.autoconfigure.BackoffProperties;
import io.ductor.autoconfigure.internal.PropertyChecks;
import io.ductor.observation.DispatchRelation;

/**
 * Durable effects, under {@code ductor.effects}: how they are recorded and retried, and
 * the workers that dispatch them (drainer), redrive them (reconciler) and fire recurring
 * alarms (alarm scheduler). The two maps whose keys are effect or alarm names, which hold
 * dots, are bound apart so that every form of their keys binds:
 * {@link DuctorEffectOverrides} ({@code ductor.effects.overrides}) and
 * {@link DuctorConfiguredAlarms} ({@code ductor.effects.alarms}).
 *
 * @param maxAttempts Attempts before an intent is marked failed, unless the effect says
 * otherwise.
 * @param backoff The jittered wait between attempts of an effect (defaults: initial 1s,
 * max 10m, multiplier 2.0).
 * @param retention How long completed and cancelled intents are kept. Scheduling an
 * effect again with the same key within this window records nothing new. At most 36500d;
 * to keep them for ever, set ductor.retention.enabled=false.
 * @param maxPayloadSize Largest JSON payload of an effect's arguments.
 * @param reconciliation How the @EffectReconciler of an effect is asked about an attempt
 * whose outcome is unknown.
 * @param tracing How the span of a dispatch attempt relates to the span that recorded its
 * effect, when the application has a tracer.
 * @param drainer The worker that dispatches effect intents.
 * @param reconciler The worker that redrives effect intents whose lease expired.
 * @param alarmScheduler The worker that records the due occurrences of recurring alarms.
 */
@ConfigurationProperties("ductor.effects")
public record DuctorEffectsProperties(@DefaultValue("10") int maxAttempts,
		@NestedConfigurationProperty BackoffProperties backoff, @DefaultValue("7d") Duration retention,
		@DefaultValue("256KB") DataSize maxPayloadSize, @DefaultValue Reconciliation reconciliation,
		@DefaultValue Tracing tracing, @DefaultValue Drainer drainer, @DefaultValue Reconciler reconciler,
		@DefaultValue AlarmScheduler alarmScheduler) {

	static final BackoffProperties DEFAULT_BACKOFF = new BackoffProperties(Duration.ofSeconds(1),
			Duration.ofMinutes(10), 2.0);

	public DuctorEffectsProperties {
		PropertyChecks.requireAtLeastOne("ductor.effects.max-attempts", maxAttempts);
		backoff = BackoffProperties.orDefaults(backoff, DEFAULT_BACKOFF, "ductor.effects.backoff");
		PropertyChecks.requirePositive("ductor.effects.retention", retention);
		if (maxPayloadSize.toBytes() < 1 || maxPayloadSize.toBytes() > 64L * 1024 * 1024) {
			throw new IllegalArgumentException(
					"ductor.effects.max-payload-size must be between 1B and 64MB but was " + maxPayloadSize);
		}
	}

	/**
	 * Tracing of durable effects, when the application has a Micrometer tracer.
	 *
	 * @param dispatchRelation How the span of each dispatch attempt relates to the span
	 * that recorded the effect (read from the trace context stored with the intent):
	 * child (the attempt continues the recording's trace) or link (the attempt starts a
	 * new trace with a span link to the recording's span).
	 * @param observeRecording Whether recording an effect is an observation of its own
	 * (ductor.effect.schedule: a timer, and a span that the attempts are children of).
	 * Off, the intent stores the trace context current where it is recorded (a request's,
	 * a tick's span) and no observation runs per recording; recorded outside any trace,
	 * it stores none and each attempt starts a trace of its own.
	 */
	public record Tracing(@DefaultValue("child") DispatchRelation dispatchRelation,
			@DefaultValue("false") boolean observeRecording) {

	}

	/**
	 * Reconciliation: when an attempt's outcome is unknown (its receiver threw, or its
	 * lease expired after it started) and its effect has an @EffectReconciler, the
	 * reconciler worker asks it whether the receiver applied the attempt, outside any
	 * transaction, in rounds.
	 *
	 * @param maxRounds How often the reconciler is asked about one attempt (UNKNOWN, or
	 * it threw) before the intent waits in needs_decision (an IDEMPOTENT one is retried
	 * instead). At least 1.
	 * @param backoff The jittered wait before the first round and between rounds
	 * (defaults: initial 1s, max 5m, multiplier 2.0). Rounds run at the reconciler
	 * worker's rounds (ductor.effects.reconciler.interval), so a wait shorter than that
	 * interval is rounded up to it.
	 */
	public record Reconciliation(@DefaultValue("5") int maxRounds,
			@NestedConfigurationProperty BackoffProperties backoff) {

		static final BackoffProperties DEFAULT_BACKOFF = new BackoffProperties(Duration.ofSeconds(1),
				Duration.ofMinutes(5), 2.0);

		public Reconciliation {
			PropertyChecks.requireBetween("ductor.effects.reconciliation.max-rounds", maxRounds, 1, 1_000);
			backoff = BackoffProperties.orDefaults(backoff, DEFAULT_BACKOFF, "ductor.effects.reconciliation.backoff");
		}

	}

	/**
	 * The drainer: claims due effect intents in batches under a lease and runs them
	 * outside the claiming transaction.
	 *
	 * @param enabled Whether this instance dispatches effect intents.
	 * @param pollInterval How often the drainer looks for due intents when nothing wakes
	 * it. Commits wake it at once; the poll picks up delayed intents, retries and missed
	 * wake-ups.
	 * @param batchSize Most intents claimed in one statement.
	 * @param concurrency How many effects run at once in this instance.
	 * @param lease How long a claim lasts without the drainer's heartbeat. After it, the
	 * reconciler hands the intent to another attempt.
	 * @param notifyOnCommit Whether committing a due intent sends pg_notify so drainers
	 * of other instances wake at once.
	 * @param notifyInTransaction Whether that pg_notify is sent inside the committing
	 * transaction instead of right after the commit. Inside, it is delivered atomically
	 * with the commit even if the JVM dies at that moment, but PostgreSQL commits
	 * notifying transactions one at a time, which caps concurrent producers; after the
	 * commit, a notification lost with the JVM leaves the intent to the other instances'
	 * next poll.
	 * @param dispatchAtCommit Whether an intent due at commit (no delay, no ordering key,
	 * not an alarm, not recorded by a run's tick) is recorded already claimed by this
	 * instance's drainer, when it has room, and handed to its workers right after the
	 * commit, with no wake-up and no claim statement. Other instances and the reconciler
	 * see an ordinary lease. When the drainer is saturated, or this is off, intents are
	 * recorded pending and claimed.
	 */
	public record Drainer(@DefaultValue("true") boolean enabled, @DefaultValue("1s") Duration pollInterval,
			@DefaultValue("100") int batchSize, @DefaultValue("8") int concurrency, @DefaultValue("30s") Duration lease,
			@DefaultValue("true") boolean notifyOnCommit, @DefaultValue("false") boolean notifyInTransaction,
			@DefaultValue("true") boolean dispatchAtCommit) {

		public Drainer {
			PropertyChecks.requirePositive("ductor.effects.drainer.poll-interval", pollInterval);
			PropertyChecks.requireBetween("ductor.effects.drainer.batch-size", batchSize, 1, 10_000);
			PropertyChecks.requireBetween("ductor.effects.drainer.concurrency", concurrency, 1, 1_000);
			if (lease.compareTo(Duration.ofSeconds(1)) < 0) {
				throw new IllegalArgumentException("ductor.effects.drainer.lease must be at least 1s but was " + lease);
			}
			PropertyChecks.requireAtMostMax("ductor.effects.drainer.lease", lease);
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
			PropertyChecks.requirePositive("ductor.effects.reconciler.interval", interval);
			PropertyChecks.requireBetween("ductor.effects.reconciler.batch-size", batchSize, 1, 100_000);
		}

	}

	/**
	 * The recurring-alarm scheduler: records the due occurrences of recurring alarms.
	 * Safe in every instance at once: each round locks the due alarms it handles with
	 * SKIP LOCKED.
	 *
	 * @param enabled Whether the scheduler runs in this instance.
	 * @param interval Pause between rounds: how late, at most, an occurrence is recorded.
	 * @param batchSize Most due alarms handled in one transaction.
	 */
	public record AlarmScheduler(@DefaultValue("true") boolean enabled, @DefaultValue("1s") Duration interval,
			@DefaultValue("100") int batchSize) {

		public AlarmScheduler {
			PropertyChecks.requirePositive("ductor.effects.alarm-scheduler.interval", interval);
			PropertyChecks.requireBetween("ductor.effects.alarm-scheduler.batch-size", batchSize, 1, 10_000);
		}

	}

}
