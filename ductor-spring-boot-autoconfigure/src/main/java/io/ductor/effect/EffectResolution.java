package io.ductor.effect;

/**
 * An operator's decision on an intent in {@code needs_decision}.
 */
public enum EffectResolution {

	/** The receiver did not apply the call: run it again, with the same key. */
	RETRY,

	/** The receiver applied the call: mark the intent completed without running it. */
	MARK_DONE,

	/** Give up: mark the intent failed without running it. */
	MARK_FAILED,

	/**
	 * Undo the run instead: the intent is cancelled and its run fails, in one transaction
	 * that records the compensations of every step of the run that may have reached its
	 * receiver (this one included, since its outcome is unknown), as {@code tick.fail}
	 * does. Only for an intent recorded by a tick of a run that is active or already
	 * failed.
	 */
	COMPENSATE

}
