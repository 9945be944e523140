package io.ductor.effect;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Declares how to find out whether an attempt of a {@link DurableEffect} was applied, so
 * that an unknown outcome (the receiver threw, or the drainer's lease expired after the
 * attempt started) is settled by asking the receiver instead of an operator.
 * <p>
 * On a public method of a Spring bean that returns {@link ReconcileOutcome}. Its first
 * parameter is the intent's idempotency key ({@code String}) or its {@link EffectContext}
 * (key, intent id, effect name, the attempt whose outcome is unknown, when it was due);
 * it may be followed by exactly the effect method's parameters, which receive the stored
 * arguments: <pre class="code">
 * &#64;EffectReconciler("receipt.send")
 * public ReconcileOutcome receiptSent(String key, String orderId, String email) {
 *     return mailServer.sentLog().contains(key) ? ReconcileOutcome.APPLIED : ReconcileOutcome.NOT_APPLIED;
 * }
 * </pre> It is called outside any transaction, by the reconciler worker, possibly more
 * than once for one attempt and from several instances at once: it must only look, never
 * change anything. {@link ReconcileOutcome#APPLIED} completes the intent,
 * {@link ReconcileOutcome#NOT_APPLIED} retries it with the same key;
 * {@link ReconcileOutcome#UNKNOWN}, {@code null} or an exception ask again later, and
 * after {@code ductor.effects.reconciliation.max-rounds} rounds a
 * {@link Receiver#NOT_IDEMPOTENT} intent waits in {@code needs_decision} (an
 * {@link Receiver#IDEMPOTENT} one is retried, as without a reconciler).
 * <p>
 * Declarations are checked at start-up: the effect must exist, have one reconciler only,
 * and the method must have one of the signatures above.
 */
@Target(ElementType.METHOD)
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface EffectReconciler {

	/**
	 * @return the name of the effect this method reconciles
	 */
	String value();

}
