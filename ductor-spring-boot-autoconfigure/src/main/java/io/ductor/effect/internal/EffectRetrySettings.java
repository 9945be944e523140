package io.ductor.effect.internal;

import java.util.Map;

import org.springframework.boot.context.properties.source.ConfigurationPropertyName;

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

	int maxConcurrencyFor(String effectName, int annotated) {
		Integer configured = find(this.maxConcurrencyByEffect, effectName);
		return (configured != null) ? configured : annotated;
	}

	int maxAttemptsFor(String effectName, int annotated) {
		Integer configured = find(this.maxAttemptsByEffect, effectName);
		return (configured != null) ? configured : (annotated > 0) ? annotated : this.maxAttempts;
	}

	Backoff backoffFor(String effectName) {
		Backoff configured = find(this.backoffByEffect, effectName);
		return (configured != null) ? configured : this.backoff;
	}

	/**
	 * The value configured for an effect: under its exact name, or under a key that
	 * Spring Boot reads as the same name (an environment variable spells it in upper case
	 * and without dashes).
	 */
	private static <V> V find(Map<String, V> byEffect, String effectName) {
		V exact = byEffect.get(effectName);
		if (exact != null || byEffect.isEmpty()) {
			return exact;
		}
		ConfigurationPropertyName name = ConfigurationPropertyName.adapt(effectName, '.');
		for (Map.Entry<String, V> entry : byEffect.entrySet()) {
			if (ConfigurationPropertyName.adapt(entry.getKey(), '.').equals(name)) {
				return entry.getValue();
			}
		}
		return null;
	}

}
