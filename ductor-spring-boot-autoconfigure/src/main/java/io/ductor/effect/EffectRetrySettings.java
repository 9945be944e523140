package io.ductor.effect;

import java.util.Map;

import io.ductor.worker.Backoff;

/**
 * How effects retry: the defaults, and per-effect overrides from configuration. An override wins
 * over {@link DurableEffect#maxAttempts()}, which wins over the default.
 *
 * @param maxAttempts the default attempt limit
 * @param backoff the default backoff between attempts
 * @param maxAttemptsByEffect attempt limits by effect name
 * @param backoffByEffect backoffs by effect name
 */
public record EffectRetrySettings(int maxAttempts, Backoff backoff, Map<String, Integer> maxAttemptsByEffect,
		Map<String, Backoff> backoffByEffect) {

	public EffectRetrySettings {
		maxAttemptsByEffect = Map.copyOf(maxAttemptsByEffect);
		backoffByEffect = Map.copyOf(backoffByEffect);
	}

	int maxAttemptsFor(String effectName, int annotated) {
		return this.maxAttemptsByEffect.getOrDefault(effectName, (annotated > 0) ? annotated : this.maxAttempts);
	}

	Backoff backoffFor(String effectName) {
		return this.backoffByEffect.getOrDefault(effectName, this.backoff);
	}

}
