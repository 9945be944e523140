package io.ductor.effect.internal;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.time.Duration;

import org.springframework.aop.support.AopUtils;

import io.ductor.effect.DurableEffectException;
import io.ductor.effect.EffectContext;
import io.ductor.effect.EffectNotAppliedException;
import io.ductor.effect.EffectStatus;
import io.ductor.effect.Receiver;
import io.ductor.effect.internal.IntentClaims.ClaimedIntent;
import io.ductor.effect.internal.IntentOutcomes.Completion;
import io.ductor.internal.DbValues;
import io.ductor.metrics.internal.DuctorObserver;
import io.ductor.observation.internal.DuctorMdc;
import io.ductor.observation.internal.DuctorInstrumentation;
import io.ductor.observation.internal.DuctorObservations;
import io.ductor.worker.internal.Backoff;

/**
 * Runs one attempt of a claimed intent: finds its effect, reads its arguments, calls the
 * real method with {@link EffectContext} set, and classifies the outcome.
 * <p>
 * An attempt of a receiver that cannot deduplicate, or of an effect with a concurrency
 * limit, is marked started, durably, just before the call; when the mark is refused (the
 * lease was lost, and with it the slot) the receiver is not called. Whatever is thrown,
 * {@code Error}s included, becomes an outcome: the attempt is always settled, the error
 * is kept on the intent, and the worker thread lives on.
 * <p>
 * While the attempt runs, the MDC names its intent, effect, key, run and attempt, and the
 * attempt is observed as a continuation of the trace context stored with the intent.
 */
public class EffectDispatcher {

	private static final int MAX_ERROR_LENGTH = 4000;

	private final EffectRegistry registry;

	private final EffectPayloads payloads;

	private final DuctorObserver observer;

	private final Duration lookupRetryDelay;

	private final Backoff reconcileBackoff;

	private volatile DispatchFaults faults = DispatchFaults.NONE;

	private final DuctorObservations observations;

	/**
	 * @param lookupRetryDelay how long an intent waits when its effect's bean could not
	 * be looked up
	 * @param reconcileBackoff the wait before the first reconciliation round of an
	 * unknown outcome
	 */
	public EffectDispatcher(EffectRegistry registry, EffectPayloads payloads, DuctorInstrumentation instrumentation,
			Duration lookupRetryDelay, Backoff reconcileBackoff) {
		this.observations = instrumentation.observations();
		this.registry = registry;
		this.payloads = payloads;
		this.observer = instrumentation.metrics();
		this.lookupRetryDelay = lookupRetryDelay;
		this.reconcileBackoff = reconcileBackoff;
	}

	/** Consult {@code faults} before every attempt calls its effect. */
	void injectFaults(DispatchFaults faults) {
		this.faults = (faults != null) ? faults : DispatchFaults.NONE;
	}

	/**
	 * Run one attempt. Never throws.
	 * @param intent the claimed intent
	 * @param startMark marks an attempt of a {@link Receiver#NOT_IDEMPOTENT} receiver or
	 * of a concurrency-limited effect started
	 * @return its outcome, or {@code null} when the attempt could not start because its
	 * lease was lost: the receiver was not called and there is nothing to record
	 */
	public Completion dispatch(ClaimedIntent intent, StartMark startMark) {
		long start = System.nanoTime();
		Completion completion;
		DuctorMdc.Restore mdc = DuctorMdc.attempt(intent.id(), intent.effectName(), intent.key(), intent.runId(),
				intent.attempt());
		DuctorObservations.Scope scope = this.observations
			.dispatch(
					new DuctorObservations.Attempt(intent.id(), intent.effectName(), intent.receiver().name(),
							intent.key(), intent.attempt(), intent.runId()),
					TraceContexts.decode(intent.traceContext()));
		try {
			try {
				if (intent.lagMillis() != null) {
					this.observer.effectLag(intent.effectName(), intent.lagMillis());
				}
				completion = attempt(intent, startMark, scope);
			}
			catch (Throwable ex) {
				// not expected: every step below catches its own failures; still, never
				// leave an attempt unsettled
				scope.error(ex);
				completion = (intent.receiver() == Receiver.NOT_IDEMPOTENT)
						? unknownOutcome(intent, "Dispatch failed unexpectedly: " + describe(ex)) : finalFailure(intent,
								"Dispatch failed unexpectedly on attempt " + intent.attempt() + ": " + describe(ex));
			}
			if (completion != null) {
				String outcome = outcome(completion.status());
				scope.outcome(outcome);
				this.observer.effectDispatched(intent.effectName(), outcome, System.nanoTime() - start);
			}
			else {
				scope.outcome("lease_lost");
			}
			return completion;
		}
		finally {
			scope.close();
			mdc.close();
		}
	}

	private static String outcome(EffectStatus status) {
		return (status == EffectStatus.PENDING) ? "retry" : DbValues.of(status);
	}

	private Completion attempt(ClaimedIntent intent, StartMark startMark, DuctorObservations.Scope scope) {
		EffectDefinition effect = this.registry.find(intent.effectName());
		if (effect == null) {
			return finalFailure(intent, "Effect '" + intent.effectName() + "' does not exist in this application: no "
					+ "@DurableEffect method has that name. The intent is kept; retry it once the effect is back.");
		}
		Object[] args;
		try {
			args = this.payloads.read(effect, intent.payloadJson());
		}
		catch (DurableEffectException ex) {
			return finalFailure(intent, ex.getMessage());
		}
		catch (Throwable ex) {
			// e.g. ExceptionInInitializerError, NoClassDefFoundError: a stored type this
			// code cannot load
			return finalFailure(intent, "Cannot read the stored arguments of effect '" + effect.name() + "' on attempt "
					+ intent.attempt() + "; the effect did not run: " + describe(ex));
		}
		Object bean;
		Method method;
		try {
			bean = this.registry.bean(effect);
			method = AopUtils.selectInvocableMethod(effect.method(), bean.getClass());
		}
		catch (RuntimeException ex) {
			// the bean lookup failed (context closing, lazy bean failing): retry later
			// rather than lose the intent
			return new Completion(intent.id(), intent.attempt(), EffectStatus.PENDING,
					truncate("Dispatch failed before the effect ran: " + describe(ex)), this.lookupRetryDelay);
		}
		catch (Throwable ex) {
			return finalFailure(intent, "Cannot look up the bean of effect '" + effect.name() + "'; the effect did "
					+ "not run: " + describe(ex));
		}
		// a limited effect's slot is held by a live lease: an attempt whose lease expired
		// while it waited for a worker may have lost its slot to another attempt
		if (intent.receiver() == Receiver.NOT_IDEMPOTENT || effect.isLimited()) {
			try {
				if (!startMark.markStarted(intent)) {
					return null;
				}
			}
			catch (RuntimeException ex) {
				return notCalled(effect, intent, "Could not mark attempt " + intent.attempt()
						+ " started, so the receiver was not called: " + describe(ex));
			}
		}
		EffectContext.Scope current = new EffectContext(intent.id(), effect.name(), intent.key(), intent.attempt(),
				intent.dueAt())
			.makeCurrent();
		DurableEffectInterceptor.allowDispatch(effect);
		try {
			Throwable fault = this.faults.faultFor(effect.name(), intent.key(), intent.attempt());
			if (fault != null) {
				return failure(effect, intent, fault);
			}
			AttemptReceipt.clear();
			method.invoke(bean, args);
			return new Completion(intent.id(), intent.attempt(), EffectStatus.COMPLETED, null, null,
					AttemptReceipt.take());
		}
		catch (InvocationTargetException ex) {
			scope.error(ex.getTargetException());
			return failure(effect, intent, ex.getTargetException());
		}
		catch (Throwable ex) {
			scope.error(ex);
			return failure(effect, intent, ex);
		}
		finally {
			AttemptReceipt.clear();
			DurableEffectInterceptor.endDispatch();
			current.close();
		}
	}

	private Completion failure(EffectDefinition effect, ClaimedIntent intent, Throwable failure) {
		String error = describe(failure);
		if (effect.isNonRetryable(failure)) {
			return finalFailure(intent, "Non-retryable failure on attempt " + intent.attempt() + ": " + error);
		}
		if (intent.receiver() == Receiver.NOT_IDEMPOTENT && !(failure instanceof EffectNotAppliedException)) {
			return unknownOutcome(intent, error);
		}
		if (failure instanceof LinkageError) {
			// the code cannot run this effect (a class fails to load or initialise):
			// every retry would fail alike
			return finalFailure(intent, "The application's code cannot run this effect (attempt " + intent.attempt()
					+ "); retry it once the code is fixed: " + error);
		}
		if (!(failure instanceof EffectNotAppliedException) && this.registry.reconciler(effect.name()) != null) {
			// the receiver deduplicates, but its reconciler may spare a retry (or tell an
			// applied last attempt)
			return reconciling(intent, error);
		}
		if (intent.attempt() >= intent.maxAttempts()) {
			return finalFailure(intent, "Gave up after " + intent.attempt() + " attempt(s): " + error);
		}
		return new Completion(intent.id(), intent.attempt(), EffectStatus.PENDING, truncate(error),
				effect.backoff().delay(intent.attempt()));
	}

	/**
	 * The outcome of the attempt is unknown: its reconciler is asked when the effect has
	 * one, otherwise the intent waits for a decision.
	 */
	private Completion unknownOutcome(ClaimedIntent intent, String error) {
		return (this.registry.reconciler(intent.effectName()) != null) ? reconciling(intent, error)
				: needsDecision(intent, error);
	}

	private Completion reconciling(ClaimedIntent intent, String error) {
		return new Completion(intent.id(), intent.attempt(), EffectStatus.RECONCILING,
				truncate("Outcome unknown after attempt " + intent.attempt() + "; asking its reconciler: " + error),
				this.reconcileBackoff.delay(1));
	}

	/** The receiver was certainly not called: retry while attempts remain. */
	private Completion notCalled(EffectDefinition effect, ClaimedIntent intent, String error) {
		if (intent.attempt() >= intent.maxAttempts()) {
			return finalFailure(intent, "Gave up after " + intent.attempt() + " attempt(s): " + error);
		}
		return new Completion(intent.id(), intent.attempt(), EffectStatus.PENDING, truncate(error),
				effect.backoff().delay(intent.attempt()));
	}

	private static Completion needsDecision(ClaimedIntent intent, String error) {
		return new Completion(intent.id(), intent.attempt(), EffectStatus.NEEDS_DECISION,
				truncate("Outcome unknown after attempt " + intent.attempt() + " at a receiver that cannot "
						+ "deduplicate; not retried automatically: " + error),
				null);
	}

	private static Completion finalFailure(ClaimedIntent intent, String error) {
		return new Completion(intent.id(), intent.attempt(), EffectStatus.FAILED, truncate(error), null);
	}

	private static String describe(Throwable failure) {
		String description = failure.getClass().getName()
				+ ((failure.getMessage() != null) ? ": " + failure.getMessage() : "");
		Throwable cause = failure.getCause();
		if (failure instanceof Error && cause != null && cause != failure) {
			// an ExceptionInInitializerError says little without what the initialiser
			// threw
			description += " (caused by " + cause.getClass().getName()
					+ ((cause.getMessage() != null) ? ": " + cause.getMessage() : "") + ")";
		}
		return description;
	}

	private static String truncate(String error) {
		return (error.length() <= MAX_ERROR_LENGTH) ? error : error.substring(0, MAX_ERROR_LENGTH) + "…";
	}

	/** Marks an attempt started before its receiver is called. */
	@FunctionalInterface
	public interface StartMark {

		/**
		 * @param intent the claimed intent
		 * @return whether the attempt may start; {@code false} when its lease was lost
		 */
		boolean markStarted(ClaimedIntent intent);

	}

}
