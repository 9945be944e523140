package io.ductor.metrics.internal;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.ToDoubleFunction;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;

/**
 * Ductor's Micrometer meters. Counters and timers follow what the observer is told;
 * gauges read the cached {@link DuctorBacklog} snapshot, so a scrape costs at most one
 * cheap query.
 * <ul>
 * <li>{@code ductor.effects.scheduled} (effect), {@code ductor.effects.dispatched}
 * (effect, outcome), {@code ductor.effects.reconciled} (effect, outcome),
 * {@code ductor.effects.dispatch.duration} (effect, outcome), {@code ductor.effects.lag}
 * (effect): from the recording commit to the first claim, by the database clock;</li>
 * <li>{@code ductor.effects.backlog}, {@code ductor.effects.oldest.age} (seconds),
 * {@code ductor.effects.in.flight}, {@code ductor.effects.reconciling},
 * {@code ductor.effects.parked} (status), {@code ductor.idempotency.pending};</li>
 * <li>{@code ductor.ticks} (outcome), {@code ductor.ticks.conflicts},
 * {@code ductor.idempotency.reservations} (outcome), {@code ductor.idempotency.released}
 * (reason), {@code ductor.worker.runs} (worker, outcome),
 * {@code ductor.drainer.lease.lost};</li>
 * <li>{@code ductor.alarms.occurrences} (alarm, outcome {@code recorded}: occurrences
 * recorded; {@code missed}: scheduler rounds that found missed occurrences).</li>
 * </ul>
 */
public class DuctorMetrics implements DuctorObserver {

	private final DuctorBacklog backlog;

	private final MeterRegistry registry;

	private final Map<String, Counter> scheduled = new ConcurrentHashMap<>();

	/**
	 * Register Ductor's gauges in {@code registry} and count into it from now on.
	 * @param backlog the backlog the gauges read
	 * @param registry the registry
	 */
	public DuctorMetrics(DuctorBacklog backlog, MeterRegistry registry) {
		this.backlog = backlog;
		this.registry = registry;
		gauge(registry, "ductor.effects.backlog", "Effect intents waiting to run", null,
				DuctorBacklog.Snapshot::pendingIntents);
		gauge(registry, "ductor.effects.oldest.age", "How long the oldest due intent has waited past its due time",
				"seconds", (snapshot) -> snapshot.oldestDueAge().toNanos() / 1e9);
		gauge(registry, "ductor.effects.in.flight", "Effect intents being dispatched", null,
				DuctorBacklog.Snapshot::inFlight);
		Gauge.builder("ductor.effects.parked", this, (metrics) -> metrics.read(DuctorBacklog.Snapshot::failed))
			.description("Effect intents that need an operator")
			.tag("status", "failed")
			.register(registry);
		Gauge.builder("ductor.effects.parked", this, (metrics) -> metrics.read(DuctorBacklog.Snapshot::needsDecision))
			.description("Effect intents that need an operator")
			.tag("status", "needs_decision")
			.register(registry);
		gauge(registry, "ductor.effects.reconciling",
				"Effect intents whose outcome is unknown, waiting for their reconciler", null,
				DuctorBacklog.Snapshot::reconciling);
		gauge(registry, "ductor.idempotency.pending", "Idempotency reservations not settled yet", null,
				DuctorBacklog.Snapshot::pendingReservations);
	}

	private void gauge(MeterRegistry registry, String name, String description, String unit,
			ToDoubleFunction<DuctorBacklog.Snapshot> value) {
		Gauge.builder(name, this, (metrics) -> metrics.read(value))
			.description(description)
			.baseUnit(unit)
			.register(registry);
	}

	private double read(ToDoubleFunction<DuctorBacklog.Snapshot> value) {
		try {
			return value.applyAsDouble(this.backlog.snapshot());
		}
		catch (RuntimeException ex) {
			// the database is unreachable: the health contributor says so; the gauge has
			// no value
			return Double.NaN;
		}
	}

	@Override
	public void tick(String outcome, int attempts) {
		this.registry.counter("ductor.ticks", "outcome", outcome).increment();
		if (attempts > 1) {
			this.registry.counter("ductor.ticks.conflicts").increment(attempts - 1);
		}
	}

	@Override
	public void effectScheduled(String effect) {
		// found once per effect: every commit that records an intent counts here
		Counter counter = this.scheduled.get(effect);
		if (counter == null) {
			counter = this.registry.counter("ductor.effects.scheduled", "effect", effect);
			this.scheduled.put(effect, counter);
		}
		counter.increment();
	}

	@Override
	public void effectDispatched(String effect, String outcome, long nanos) {
		this.registry.counter("ductor.effects.dispatched", "effect", effect, "outcome", outcome).increment();
		this.registry.timer("ductor.effects.dispatch.duration", "effect", effect, "outcome", outcome)
			.record(nanos, TimeUnit.NANOSECONDS);
	}

	@Override
	public void effectReconciled(String effect, String outcome) {
		this.registry.counter("ductor.effects.reconciled", "effect", effect, "outcome", outcome).increment();
	}

	@Override
	public void effectLag(String effect, double millis) {
		this.registry.timer("ductor.effects.lag", "effect", effect)
			.record((long) (Math.max(0, millis) * 1_000_000), TimeUnit.NANOSECONDS);
	}

	@Override
	public void workerRound(String worker, boolean success) {
		this.registry.counter("ductor.worker.runs", "worker", worker, "outcome", success ? "success" : "failure")
			.increment();
	}

	@Override
	public void drainerLeaseLost(int leases) {
		Counter.builder("ductor.drainer.lease.lost")
			.description("Leases a drainer found lost while it held their intents")
			.register(this.registry)
			.increment(leases);
	}

	@Override
	public void reservation(String outcome) {
		this.registry.counter("ductor.idempotency.reservations", "outcome", outcome).increment();
	}

	@Override
	public void released(String reason, int count) {
		if (count > 0) {
			this.registry.counter("ductor.idempotency.released", "reason", reason).increment(count);
		}
	}

	@Override
	public void alarmOccurrences(String alarm, int recorded, boolean missed) {
		if (recorded > 0) {
			this.registry.counter("ductor.alarms.occurrences", "alarm", alarm, "outcome", "recorded")
				.increment(recorded);
		}
		if (missed) {
			this.registry.counter("ductor.alarms.occurrences", "alarm", alarm, "outcome", "missed").increment();
		}
	}

}
