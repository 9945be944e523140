package io.ductor.effect.internal;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.List;

import tools.jackson.databind.JavaType;

import io.ductor.effect.NonRetryableEffectException;
import io.ductor.effect.Receiver;
import io.ductor.worker.internal.Backoff;

/**
 * Everything Ductor needs to record and dispatch one effect, resolved once from its
 * method, its annotation and the configuration.
 *
 * @param name the effect name
 * @param beanName the bean whose method runs it
 * @param method the user-class method
 * @param parameterTypes the method's generic parameter types, for the JSON payload
 * @param key the key expression, parsed once, or {@code null} for a fresh UUID per call
 * @param orderingKey the ordering key expression, parsed once, or {@code null}
 * @param delay the wait before the first attempt
 * @param receiver the receiver kind
 * @param maxAttempts the attempt limit
 * @param backoff the backoff between attempts
 * @param noRetryFor exceptions that fail the intent at once
 * @param compensation the effect that undoes this one with the same arguments, or
 * {@code null}
 * @param maxConcurrency the most attempts that run at once across all instances, 0 for no
 * limit
 */
public record EffectDefinition(String name, String beanName, Method method, List<JavaType> parameterTypes,
		EffectExpression key, EffectExpression orderingKey, Duration delay, Receiver receiver, int maxAttempts,
		Backoff backoff, List<Class<? extends Throwable>> noRetryFor, String compensation, int maxConcurrency) {

	boolean isLimited() {
		return this.maxConcurrency > 0;
	}

	boolean isNonRetryable(Throwable failure) {
		if (failure instanceof NonRetryableEffectException) {
			return true;
		}
		return this.noRetryFor.stream().anyMatch((type) -> type.isInstance(failure));
	}

}
