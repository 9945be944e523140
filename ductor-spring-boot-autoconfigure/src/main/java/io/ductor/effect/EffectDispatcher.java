package io.ductor.effect;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;

import org.springframework.aop.support.AopUtils;

import io.ductor.effect.IntentStore.ClaimedIntent;
import io.ductor.effect.IntentStore.Completion;
import io.ductor.metrics.DuctorObserver;

/**
 * Runs one attempt of a claimed intent: finds its effect, reads its arguments, calls the real
 * method with {@link EffectContext} set, and classifies the outcome.
 */
class EffectDispatcher {

	private static final int MAX_ERROR_LENGTH = 4000;

	private final EffectRegistry registry;

	private final EffectPayloads payloads;

	private final DuctorObserver observer;

	EffectDispatcher(EffectRegistry registry, EffectPayloads payloads, DuctorObserver observer) {
		this.registry = registry;
		this.payloads = payloads;
		this.observer = observer;
	}

	Completion dispatch(ClaimedIntent intent) {
		if (intent.lagMillis() != null) {
			this.observer.effectLag(intent.effectName(), intent.lagMillis());
		}
		long start = System.nanoTime();
		Completion completion = attempt(intent);
		this.observer.effectDispatched(intent.effectName(), outcome(completion.status()), System.nanoTime() - start);
		return completion;
	}

	private static String outcome(EffectStatus status) {
		return (status == EffectStatus.PENDING) ? "retry" : status.dbValue();
	}

	private Completion attempt(ClaimedIntent intent) {
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
		Object bean = this.registry.bean(effect);
		Method method = AopUtils.selectInvocableMethod(effect.method(), bean.getClass());
		EffectContext.set(new EffectContext(intent.id(), effect.name(), intent.key(), intent.attempt(), intent.dueAt()));
		DurableEffectInterceptor.allowDispatch(effect);
		try {
			method.invoke(bean, args);
			return new Completion(intent.id(), intent.attempt(), EffectStatus.COMPLETED, null, null);
		}
		catch (InvocationTargetException ex) {
			return failure(effect, intent, ex.getTargetException());
		}
		catch (IllegalAccessException | RuntimeException ex) {
			return failure(effect, intent, ex);
		}
		finally {
			DurableEffectInterceptor.endDispatch();
			EffectContext.clear();
		}
	}

	private Completion failure(EffectDefinition effect, ClaimedIntent intent, Throwable failure) {
		String error = describe(failure);
		if (effect.isNonRetryable(failure)) {
			return finalFailure(intent, "Non-retryable failure on attempt " + intent.attempt() + ": " + error);
		}
		if (intent.receiver() == Receiver.NOT_IDEMPOTENT && !(failure instanceof EffectNotAppliedException)) {
			return new Completion(intent.id(), intent.attempt(), EffectStatus.NEEDS_DECISION,
					truncate("Outcome unknown after attempt " + intent.attempt() + " at a receiver that cannot "
							+ "deduplicate; not retried automatically: " + error),
					null);
		}
		if (intent.attempt() >= intent.maxAttempts()) {
			return finalFailure(intent, "Gave up after " + intent.attempt() + " attempt(s): " + error);
		}
		return new Completion(intent.id(), intent.attempt(), EffectStatus.PENDING, truncate(error),
				effect.backoff().delay(intent.attempt()));
	}

	private static Completion finalFailure(ClaimedIntent intent, String error) {
		return new Completion(intent.id(), intent.attempt(), EffectStatus.FAILED, truncate(error), null);
	}

	private static String describe(Throwable failure) {
		return failure.getClass().getName() + ((failure.getMessage() != null) ? ": " + failure.getMessage() : "");
	}

	private static String truncate(String error) {
		return (error.length() <= MAX_ERROR_LENGTH) ? error : error.substring(0, MAX_ERROR_LENGTH) + "…";
	}

}
