package io.ductor.effect;

import java.time.Duration;

/**
 * The outbox for producers: schedule effects and named alarms inside the caller's
 * transaction, and register compensations, as the {@link DurableEffect} methods do.
 * Operators act on the recorded intents through {@link EffectOperations}; recurring
 * alarms are declared through {@link RecurringAlarms}.
 */
public interface EffectOutbox {

	/**
	 * Record a call of an effect in the caller's transaction, as calling the annotated
	 * method would.
	 * @param request the effect, its arguments and options
	 * @return the intent's idempotency key
	 * @throws DurableEffectException without a transaction, for an unknown effect or
	 * unstorable arguments
	 * @throws io.ductor.IdempotencyKeyReuseException when the key is bound to another
	 * payload
	 */
	String schedule(EffectRequest request);

	/**
	 * Register, in the current tick, the compensation of an intent the tick records (or
	 * recorded) with {@code key}: for an effect called through its annotated method whose
	 * undo takes other arguments than the effect. The first compensation registered for a
	 * key in a run wins.
	 * @param key the idempotency key of the intent to undo if the run fails
	 * @param compensation the effect and arguments that undo it
	 * @throws DurableEffectException outside a tick of a run, or for an unknown effect
	 */
	void compensateWith(String key, EffectRequest compensation);

	/**
	 * Schedule the next occurrence of a named alarm in the caller's transaction: its
	 * pending occurrence, if any, is cancelled and a new one with a new idempotency key
	 * is recorded. An occurrence that is running meanwhile may still complete or fail,
	 * but it never goes back to pending beside the new one: an attempt that would be
	 * retried is cancelled instead ("superseded by a rescheduled occurrence"). Its row
	 * stays locked until the caller commits, so keep the transaction short. Forward the
	 * occurrence's {@link EffectContext#idempotencyKey()}, not the alarm name.
	 * @param alarmName the alarm's name, an identifier of at most 200 characters
	 * @param delay when the occurrence is due, from the commit
	 * @param request the effect and its arguments; it must not carry a key
	 * @return the new occurrence's idempotency key
	 */
	String scheduleAlarm(String alarmName, Duration delay, EffectRequest request);

	/**
	 * Cancel the pending occurrence of a named alarm, in the caller's transaction. A
	 * running occurrence may still complete or fail, but is not retried.
	 * @param alarmName the alarm's name
	 * @return whether a pending occurrence was cancelled
	 */
	boolean cancelAlarm(String alarmName);

}
