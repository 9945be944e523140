package io.ductor.effect;

/**
 * The life of an effect intent.
 */
public enum EffectStatus {

	/** Waiting for its next attempt. */
	PENDING,

	/** Claimed by a drainer, under a lease. */
	IN_FLIGHT,

	/**
	 * The outcome of the last attempt is unknown and the effect has an
	 * {@link EffectReconciler}: waiting for it to say whether the receiver applied the
	 * attempt.
	 */
	RECONCILING,

	/** The effect ran successfully. */
	COMPLETED,

	/** Attempts exhausted or a non-retryable error; kept with its last error. */
	FAILED,

	/**
	 * The outcome at a receiver that cannot deduplicate is unknown: an operator decides.
	 */
	NEEDS_DECISION,

	/** Cancelled before it ran. */
	CANCELLED;

}
