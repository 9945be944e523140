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
	MARK_FAILED

}
