package io.ductor.metrics.internal;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.function.Function;
import java.util.function.Supplier;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;

import io.ductor.effect.EffectConcurrency;
import io.ductor.effect.RecurringAlarm;

/**
 * Gauges of recurring alarms and concurrency limits, read from one cached snapshot (so a
 * scrape costs at most two small queries per TTL):
 * <ul>
 * <li>{@code ductor.alarms.next.due} (alarm, seconds): how long until the alarm's next
 * occurrence, negative when it is overdue;</li>
 * <li>{@code ductor.alarms.last.occurrence.age} (alarm, seconds): how long ago the
 * instant of its last occurrence recorded was;</li>
 * <li>{@code ductor.effects.slots.used} and {@code ductor.effects.slots.limit} (effect):
 * a limited effect's slots in use across all instances, and its limit.</li>
 * </ul>
 * Alarms get their gauges when the meters are bound: those declared in properties and
 * those already stored then.
 */
public class DuctorSchedulingMetrics implements MeterBinder {

	private final Supplier<Map<String, Integer>> limits;

	private final Supplier<List<EffectConcurrency>> concurrency;

	private final Supplier<List<RecurringAlarm>> alarms;

	private final Duration ttl;

	private final Supplier<Instant> clock;

	private final List<String> alarmNames;

	private volatile Snapshot snapshot;

	/**
	 * @param limits the concurrency limits of the limited effects, by name
	 * @param concurrency the limited effects with their slots in use
	 * @param alarms the stored recurring alarms
	 * @param ttl how long one snapshot is reused
	 * @param alarmNames alarms to show besides those stored when the meters are bound
	 */
	public DuctorSchedulingMetrics(Supplier<Map<String, Integer>> limits, Supplier<List<EffectConcurrency>> concurrency,
			Supplier<List<RecurringAlarm>> alarms, Duration ttl, List<String> alarmNames) {
		this.limits = limits;
		this.concurrency = concurrency;
		this.alarms = alarms;
		this.ttl = ttl;
		this.clock = Instant::now;
		this.alarmNames = List.copyOf(alarmNames);
	}

	@Override
	public void bindTo(MeterRegistry registry) {
		TreeSet<String> alarms = new TreeSet<>(this.alarmNames);
		try {
			this.alarms.get().forEach((alarm) -> alarms.add(alarm.name()));
		}
		catch (RuntimeException ex) {
			// the database is unreachable now: the declared alarms still get their gauges
		}
		for (String alarm : alarms) {
			Gauge
				.builder("ductor.alarms.next.due", this, (metrics) -> metrics.alarm(alarm,
						(found) -> seconds(Duration.between(metrics.snapshot().takenAt(), found.nextAt().toInstant()))))
				.description("How long until the recurring alarm's next occurrence; negative when overdue")
				.baseUnit("seconds")
				.tag("alarm", alarm)
				.register(registry);
			Gauge
				.builder("ductor.alarms.last.occurrence.age", this, (metrics) -> metrics.alarm(alarm,
						(found) -> (found.lastOccurrenceAt() != null) ? seconds(
								Duration.between(found.lastOccurrenceAt().toInstant(), metrics.snapshot().takenAt()))
								: Double.NaN))
				.description("How long ago the instant of the recurring alarm's last recorded occurrence was")
				.baseUnit("seconds")
				.tag("alarm", alarm)
				.register(registry);
		}
		for (String effect : this.limits.get().keySet()) {
			Gauge
				.builder("ductor.effects.slots.used", this,
						(metrics) -> metrics.slots(effect, (found) -> (double) found.inUse()))
				.description("Slots of a limited effect in use across all instances")
				.tag("effect", effect)
				.register(registry);
			Gauge
				.builder("ductor.effects.slots.limit", this,
						(metrics) -> metrics.slots(effect, (found) -> (double) found.limit()))
				.description("The concurrency limit of an effect")
				.tag("effect", effect)
				.register(registry);
		}
	}

	private double alarm(String name, Function<RecurringAlarm, Double> value) {
		try {
			RecurringAlarm alarm = snapshot().alarms().get(name);
			return (alarm != null) ? value.apply(alarm) : Double.NaN;
		}
		catch (RuntimeException ex) {
			return Double.NaN;
		}
	}

	private double slots(String effect, Function<EffectConcurrency, Double> value) {
		try {
			EffectConcurrency found = snapshot().slots().get(effect);
			return (found != null) ? value.apply(found) : Double.NaN;
		}
		catch (RuntimeException ex) {
			return Double.NaN;
		}
	}

	private Snapshot snapshot() {
		Snapshot current = this.snapshot;
		Instant now = this.clock.get();
		if (current == null || current.takenAt().plus(this.ttl).isBefore(now)) {
			Map<String, RecurringAlarm> alarms = new java.util.HashMap<>();
			this.alarms.get().forEach((alarm) -> alarms.put(alarm.name(), alarm));
			Map<String, EffectConcurrency> slots = new java.util.HashMap<>();
			this.concurrency.get().forEach((limit) -> slots.put(limit.effectName(), limit));
			current = new Snapshot(now, alarms, slots);
			this.snapshot = current;
		}
		return current;
	}

	private static double seconds(Duration duration) {
		return duration.toNanos() / 1e9;
	}

	private record Snapshot(Instant takenAt, Map<String, RecurringAlarm> alarms, Map<String, EffectConcurrency> slots) {
	}

}
