package io.ductor.effect;

import java.time.Instant;
import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * Recurring alarms, declared in code: effects recorded on a schedule, each occurrence an
 * ordinary intent. Alarms can also be declared in properties
 * ({@code ductor.effects.alarms.*}).
 */
public interface RecurringAlarms {

	/**
	 * Declare a recurring alarm, or change one, in the caller's transaction. Each
	 * occurrence is an ordinary intent whose idempotency key is the alarm's name and the
	 * occurrence's instant ({@link RecurringAlarm#occurrenceKey}), recorded when it is
	 * due by whichever instance's scheduler gets there first; forward
	 * {@link EffectContext#idempotencyKey()} to the receiver. Declaring an alarm again
	 * with the same schedule keeps its next occurrence; with another schedule, it starts
	 * with the first occurrence after now. A paused alarm stays paused.
	 * @param alarmName the alarm's name, an identifier of at most 200 characters
	 * @param schedule when it fires and what happens to missed occurrences
	 * @param request the effect and its arguments; it must not carry a key, an ordering
	 * key or a delay
	 * @return the instant of its next occurrence
	 */
	Instant scheduleRecurring(String alarmName, AlarmSchedule schedule, EffectRequest request);

	/**
	 * Pause a recurring alarm in the caller's transaction: no occurrence is recorded
	 * until it is resumed.
	 * @param alarmName the alarm
	 * @return whether it exists
	 */
	default boolean pauseRecurring(String alarmName) {
		return pauseRecurring(alarmName, null);
	}

	/**
	 * {@link #pauseRecurring(String)}, storing the operator's decision with the alarm in
	 * the same statement ({@code decision_reason}, {@code decided_by},
	 * {@code decided_at}).
	 * @param alarmName the alarm
	 * @param decision why and by whom, or {@code null}
	 * @return whether it exists
	 */
	boolean pauseRecurring(String alarmName, @Nullable OperatorDecision decision);

	/**
	 * Resume a paused recurring alarm in the caller's transaction, with its first
	 * occurrence after now (by the database clock): the occurrences of the pause are not
	 * made up.
	 * @param alarmName the alarm
	 * @return whether it exists
	 */
	default boolean resumeRecurring(String alarmName) {
		return resumeRecurring(alarmName, null);
	}

	/**
	 * {@link #resumeRecurring(String)}, storing the operator's decision with the alarm in
	 * the same statement when it was paused (resuming an alarm that runs changes
	 * nothing).
	 * @param alarmName the alarm
	 * @param decision why and by whom, or {@code null}
	 * @return whether it exists
	 */
	boolean resumeRecurring(String alarmName, @Nullable OperatorDecision decision);

	/**
	 * Delete a recurring alarm in the caller's transaction. Occurrences already recorded
	 * still run; cancel them as intents if they must not. An alarm declared in properties
	 * is declared again at the next start-up unless it is removed from them.
	 * @param alarmName the alarm
	 * @return whether it existed
	 */
	boolean cancelRecurring(String alarmName);

	/**
	 * @return every recurring alarm, by name, with its next and last occurrence
	 */
	List<RecurringAlarm> recurringAlarms();

}
