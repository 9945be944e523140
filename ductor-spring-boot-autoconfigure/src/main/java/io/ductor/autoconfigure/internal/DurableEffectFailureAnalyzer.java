package io.ductor.autoconfigure.internal;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;

import io.ductor.effect.DurableEffectException;

/**
 * Reports a start-up that failed on a {@code @DurableEffect} or {@code @EffectReconciler}
 * Ductor cannot honour: a method a proxy cannot intercept, a name used twice, an invalid
 * key expression or delay, a compensation or reconciler that does not fit its effect.
 */
@Order(Ordered.HIGHEST_PRECEDENCE)
class DurableEffectFailureAnalyzer extends AbstractFailureAnalyzer<DurableEffectException> {

	@Override
	protected FailureAnalysis analyze(Throwable rootFailure, DurableEffectException cause) {
		return new FailureAnalysis(
				"Ductor cannot run a durable effect as it is declared or used:\n\n    " + cause.getMessage(),
				"Correct the method named above. An effect is a public, non-final, void method of a Spring bean"
						+ " (not of a final class), with a name no other effect has; its key and orderingKey are"
						+ " SpEL expressions over its parameters and its delay an ISO-8601 duration. A reconciler"
						+ " returns ReconcileOutcome and takes the key or the EffectContext first. See"
						+ " docs/effects.md and docs/reconcile-and-compensate.md.",
				cause);
	}

}
