package io.ductor.effect.internal;

import java.time.Instant;
import java.util.List;
import java.util.Objects;

import org.jspecify.annotations.Nullable;

import io.ductor.effect.AlarmSchedule;
import io.ductor.effect.EffectRequest;
import io.ductor.effect.OperatorDecision;
import io.ductor.effect.RecurringAlarm;
import io.ductor.internal.Ids;

/**
 * Ductor's {@link io.ductor.effect.RecurringAlarms}: declares, pauses, resumes and
 * deletes recurring alarms in the caller's transaction.
 */
public final class DefaultRecurringAlarms implements io.ductor.effect.RecurringAlarms {

	private final EffectRegistry registry;

	private final EffectWriter writer;

	private final RecurringAlarms recurring;

	public DefaultRecurringAlarms(EffectRegistry registry, EffectWriter writer, RecurringAlarms recurring) {
		this.registry = registry;
		this.writer = writer;
		this.recurring = recurring;
	}

	@Override
	public Instant scheduleRecurring(String alarmName, AlarmSchedule schedule, EffectRequest request) {
		Ids.require("alarmName", alarmName);
		Objects.requireNonNull(schedule, "schedule must not be null");
		if (request.key() != null || request.orderingKey() != null || request.delay() != null) {
			throw new IllegalArgumentException("A recurring alarm's occurrences are keyed by their instant and due at "
					+ "it; do not set a key, an ordering key or a delay on the request");
		}
		EffectDefinition effect = effect(request.effectName());
		this.writer.requireTransaction("recurring alarm '" + alarmName + "'");
		holdRecurring(alarmName);
		return this.recurring.declare(alarmName, schedule, effect, request.args().toArray(), RecurringAlarms.API);
	}

	@Override
	public boolean pauseRecurring(String alarmName, @Nullable OperatorDecision decision) {
		this.writer.requireTransaction("recurring alarm '" + alarmName + "'");
		holdRecurring(alarmName);
		return this.recurring.pause(alarmName, decision);
	}

	@Override
	public boolean resumeRecurring(String alarmName, @Nullable OperatorDecision decision) {
		this.writer.requireTransaction("recurring alarm '" + alarmName + "'");
		holdRecurring(alarmName);
		return this.recurring.resume(alarmName, decision);
	}

	@Override
	public boolean cancelRecurring(String alarmName) {
		this.writer.requireTransaction("recurring alarm '" + alarmName + "'");
		holdRecurring(alarmName);
		return this.recurring.cancel(alarmName);
	}

	@Override
	public List<RecurringAlarm> recurringAlarms() {
		return this.recurring.list();
	}

	/**
	 * Notes that the caller's transaction holds the recurring alarm's row until it
	 * completes.
	 */
	private void holdRecurring(String alarmName) {
		Ids.require("alarmName", alarmName);
		this.writer.holdUntilCommit("ductor.recurring:" + alarmName, "Recurring alarm '" + alarmName + "'",
				"Change it in the outer transaction, or after it commits.");
	}

	private EffectDefinition effect(String name) {
		return DefaultEffectOutbox.effect(this.registry, name);
	}

}
