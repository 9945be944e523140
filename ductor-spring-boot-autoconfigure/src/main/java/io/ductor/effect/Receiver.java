package io.ductor.effect;

/**
 * What the receiver of an effect does with a repeated idempotency key.
 */
public enum Receiver {

	/**
	 * The receiver deduplicates by the key (or reconciles an earlier outcome), so an
	 * attempt whose outcome is unknown is simply retried with the same key.
	 */
	IDEMPOTENT,

	/**
	 * The receiver can neither deduplicate nor reconcile. An attempt whose outcome is
	 * unknown (it threw anything but {@link EffectNotAppliedException}, or its lease
	 * expired mid-call) is never retried automatically: the intent goes to
	 * {@code needs_decision} and waits for an operator.
	 */
	NOT_IDEMPOTENT

}
