package io.ductor.effect.internal;

/**
 * Faults to inject into dispatch, for tests: consulted before every attempt calls its
 * effect (after the attempt of a {@link Receiver#NOT_IDEMPOTENT} receiver was marked
 * started). A fault returned here is what the attempt ends with instead of calling the
 * effect's method, classified exactly as if the method had thrown it: a retry with
 * backoff, a {@code failed} intent when the attempts are used up or the exception is
 * non-retryable, reconciliation or {@code needs_decision} for an outcome that is unknown.
 * An application never needs one; {@code ductor-spring-boot-test} installs its own.
 *
 * @see EffectTestSupport#injectFaults(DispatchFaults)
 */
@FunctionalInterface
public interface DispatchFaults {

	/** No fault: every attempt calls its effect. */
	DispatchFaults NONE = (effectName, key, attempt) -> null;

	/**
	 * @param effectName the effect about to be called
	 * @param key the intent's idempotency key
	 * @param attempt the attempt number, from 1
	 * @return what the attempt throws instead of calling the effect, or {@code null} to
	 * call it
	 */
	Throwable faultFor(String effectName, String key, int attempt);

}
