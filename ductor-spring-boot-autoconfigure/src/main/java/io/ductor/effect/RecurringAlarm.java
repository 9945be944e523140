package io.ductor.effect;

import java.time.OffsetDateTime;

import org.jspecify.annotations.Nullable;

/**
 * A recurring alarm as stored: its schedule, its next occurrence and its last one.
 *
 * @param name the alarm's name
 * @param effectName the effect each occurrence runs
 * @param schedule when it fires and what happens to missed occurrences
 * @param declaredIn {@code properties} (declared under {@code ductor.effects.alarms}) or
 * {@code api} ({@link EffectOutbox#scheduleRecurring})
 * @param paused whether it is paused
 * @param nextAt the instant of its next occurrence, by the database clock
 * @param lastOccurrenceAt the instant of the last occurrence recorded, or {@code null}
 * @param lastKey the idempotency key of that occurrence, or {@code null}
 * @param lastStatus the status of that occurrence's intent, or {@code null} when there is
 * none (none recorded yet, or purged by retention)
 */
public record RecurringAlarm(String name, String effectName, AlarmSchedule schedule, String declaredIn, boolean paused,
		OffsetDateTime nextAt, @Nullable OffsetDateTime lastOccurrenceAt, @Nullable String lastKey,
		@Nullable EffectStatus lastStatus) {

	/**
	 * The idempotency key of an occurrence: the alarm's name and the occurrence's instant
	 * in ISO-8601, UTC ({@code alarm:nightly@2026-03-29T01:00:00Z}).
	 * @param alarmName the alarm
	 * @param instant the occurrence's instant
	 * @return its key
	 */
	public static String occurrenceKey(String alarmName, java.time.Instant instant) {
		return "alarm:" + alarmName + "@" + instant;
	}

}
