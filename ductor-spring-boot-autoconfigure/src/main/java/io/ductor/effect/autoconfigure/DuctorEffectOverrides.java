package io.ductor.effect.autoconfigure;

import java.util.Map;
import java.util.TreeMap;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.NestedConfigurationProperty;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.core.env.Environment;

import io.ductor.autoconfigure.BackoffProperties;
import io.ductor.autoconfigure.internal.PropertyChecks;

/**
 * The per-effect overrides of {@code ductor.effects.overrides}, by effect name. Effect
 * names hold dots ({@code billing.charge}), so the keys bind in every form Spring Boot
 * reads: {@code ductor.effects.overrides.billing.charge.max-concurrency},
 * {@code ductor.effects.overrides[billing.charge].max-concurrency}, YAML nested or
 * bracketed, and the environment variable
 * {@code DUCTOR_EFFECTS_OVERRIDES_BILLING_CHARGE_MAXCONCURRENCY}. A key that names no
 * effect, or a property an override does not have, fails start-up naming it.
 *
 * @param byEffect the overrides, by effect name as written in the configuration (an
 * environment variable writes it in lower case; {@link #find} matches it to the effect)
 */
public record DuctorEffectOverrides(Map<String, EffectOverride> byEffect) {

	/** No overrides. */
	public static final DuctorEffectOverrides NONE = new DuctorEffectOverrides(Map.of());

	public DuctorEffectOverrides {
		byEffect = java.util.Collections.unmodifiableMap(new TreeMap<>(byEffect));
	}

	/**
	 * Binds the overrides of an environment, as Ductor's auto-configuration does.
	 * @param environment the application's environment
	 * @param effectBackoff {@code ductor.effects.backoff}, which completes what an
	 * override's backoff leaves unset
	 * @return the overrides, checked
	 * @throws IllegalArgumentException naming a property whose value is out of range
	 * @throws io.ductor.DuctorException naming a property that sets nothing an override
	 * has
	 */
	public static DuctorEffectOverrides bind(Environment environment, BackoffProperties effectBackoff) {
		return EffectKeys.overrides(environment, effectBackoff);
	}

	/**
	 * Returns the override of one effect.
	 * @param effectName the effect's name, as {@code @DurableEffect} gives it
	 * @return its override, or {@code null} when the configuration has none
	 */
	public @Nullable EffectOverride find(String effectName) {
		EffectOverride exact = this.byEffect.get(effectName);
		if (exact != null) {
			return exact;
		}
		for (Map.Entry<String, EffectOverride> entry : this.byEffect.entrySet()) {
			if (sameName(entry.getKey(), effectName)) {
				return entry.getValue();
			}
		}
		return null;
	}

	/**
	 * Whether a key of the configuration names an effect, the way Spring Boot compares
	 * property names: ignoring case and dashes, so that an environment variable (upper
	 * case, no dashes) names the same effect as a properties file.
	 */
	static boolean sameName(String key, String effectName) {
		return key.equals(effectName)
				|| ConfigurationPropertyName.adapt(key, '.').equals(ConfigurationPropertyName.adapt(effectName, '.'));
	}

	/**
	 * Overrides for one effect.
	 *
	 * @param maxAttempts Attempts before the effect's intents are marked failed.
	 * @param backoff The wait between attempts of this effect; what it leaves unset is
	 * taken from ductor.effects.backoff.
	 * @param maxConcurrency The most attempts of this effect that run at once across all
	 * instances; wins over @DurableEffect(maxConcurrency). At least 1.
	 */
	public record EffectOverride(Integer maxAttempts, @NestedConfigurationProperty BackoffProperties backoff,
			Integer maxConcurrency) {

		EffectOverride checked(String prefix, BackoffProperties effectBackoff) {
			if (this.maxAttempts != null) {
				PropertyChecks.requireAtLeastOne(prefix + ".max-attempts", this.maxAttempts);
			}
			if (this.maxConcurrency != null) {
				PropertyChecks.requireBetween(prefix + ".max-concurrency", this.maxConcurrency, 1, 10_000);
			}
			return (this.backoff != null) ? new EffectOverride(this.maxAttempts,
					BackoffProperties.orDefaults(this.backoff, effectBackoff, prefix + ".backoff"), this.maxConcurrency)
					: this;
		}

	}

}
