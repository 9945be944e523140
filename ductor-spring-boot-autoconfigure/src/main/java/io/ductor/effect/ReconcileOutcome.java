package io.ductor.effect;

/**
 * What an {@link EffectReconciler} found out about an attempt whose outcome was unknown.
 */
public enum ReconcileOutcome {

	/**
	 * The receiver applied the effect with this key: the intent is completed, not
	 * retried.
	 */
	APPLIED,

	/**
	 * The receiver certainly did not apply it: the intent is retried automatically with
	 * the same key (while attempts remain).
	 */
	NOT_APPLIED,

	/**
	 * The receiver cannot tell yet: the reconciler is asked again after its backoff and,
	 * after {@code ductor.effects.reconciliation.max-rounds} rounds, the intent waits for
	 * a decision.
	 */
	UNKNOWN

}
