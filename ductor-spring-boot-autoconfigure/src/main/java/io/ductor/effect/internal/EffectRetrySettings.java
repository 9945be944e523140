package io.ductor.effect.internal;

import java.util.Map;

import io.ductor.worker.internal.Backoff;

/**
 * How effects retry: the defaults, and per-effect overrides from configuration. An
 * override wins over {@link DurableEffect#maxAttempts()}, which wins over the default.
 *
 * @param maxAttempts the default attempt limit
 * @param backoff the default backoff between attempts
 * @param maxAttemptsByEffect attempt limits by effect name
 * @param backoffByEffect backoffs by effect name
 * @param maxConcurrencyByEffect concurrency limits by effect name, which win over
 * {@link DurableEffect#maxConcurrency()}
 */
public record EffectRetrySettings(int maxAttempts, Backoff backoff, Map<String, Integer> maxAttemptsByEffect,
		Map<String, Backoff> backoffByEffect, Map<String, Integer> maxConcurrencyByEffect) {

	public EffectRetrySettings {
		maxAttemptsByEffect = Map.copyOf(maxAttemptsByEffect);
		backoffByEffect = Map.copyOf(backoffByEffect);
		maxConcurrencyByEffect = Map.copyOf(maxConcurrencyByEffect);
	}

	/** Settings without concurrency limits from configuration. */
	public EffectRetrySettings(int maxAttempts, Backoff backoff, Map<String, Integer> maxAttemptsByEffect,
			Map<String, Backoff> backoffByEffect) {
		this(maxAttempts, backoff, maxAttemptsByEffect, backoffByEffect, Map.of());
	}

	int maxConcurrencyFor(String effectName, int annotated) {
		return this.maxConcurrencyByEffect.getOrDefault(effectName, annotated);
	}

	int maxAttemptsFor(String effectName, int annotated) {
		return this.maxAttemptsByEffect.getOrDefault(effectName, (annotated > 0) ? annotated : this.maxAttempts);
	}

	Backoff backoffFor(String effectName) {
		return this.backoffByEffect.getOrDefault(effectName, this.backoff);
	}

}
