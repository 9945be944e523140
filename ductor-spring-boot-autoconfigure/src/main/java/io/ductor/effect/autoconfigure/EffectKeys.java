package io.ductor.effect.autoconfigure;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

import org.springframework.core.env.Environment;

import io.ductor.autoconfigure.BackoffProperties;
import io.ductor.autoconfigure.internal.DuctorConfigurationException;
import io.ductor.autoconfigure.internal.Suggestions;
import io.ductor.effect.autoconfigure.DuctorConfiguredAlarms.Alarm;
import io.ductor.effect.autoconfigure.DuctorEffectOverrides.EffectOverride;

/**
 * The two maps of {@code ductor.effects} keyed by names that hold dots: per-effect
 * overrides and recurring alarms. Binds them and, once every effect is known, checks that
 * each override and each alarm names one.
 */
final class EffectKeys {

	static final String OVERRIDES_PREFIX = "ductor.effects.overrides";

	static final String ALARMS_PREFIX = "ductor.effects.alarms";

	static final DottedKeyBinder<EffectOverride> OVERRIDES = new DottedKeyBinder<>(OVERRIDES_PREFIX,
			EffectOverride.class, "an effect override",
			List.of("max-attempts", "max-concurrency", "backoff.initial", "backoff.max", "backoff.multiplier"),
			List.of());

	static final DottedKeyBinder<Alarm> ALARMS = new DottedKeyBinder<>(ALARMS_PREFIX, Alarm.class, "a recurring alarm",
			List.of("cron", "every", "zone", "effect", "arguments", "missed", "grace"), List.of("arguments"));

	private EffectKeys() {
	}

	/**
	 * Binds and checks the overrides of {@code ductor.effects.overrides}.
	 * @param environment the application's environment
	 * @param effectBackoff {@code ductor.effects.backoff}, which completes an override's
	 * backoff
	 * @return the overrides
	 */
	static DuctorEffectOverrides overrides(Environment environment, BackoffProperties effectBackoff) {
		Map<String, EffectOverride> checked = new TreeMap<>();
		OVERRIDES.bind(environment)
			.forEach((name, override) -> checked.put(name,
					override.checked(OVERRIDES_PREFIX + "." + name, effectBackoff)));
		return new DuctorEffectOverrides(checked);
	}

	/**
	 * Binds and checks the alarms of {@code ductor.effects.alarms}.
	 * @param environment the application's environment
	 * @return the alarms
	 */
	static DuctorConfiguredAlarms alarms(Environment environment) {
		Map<String, Alarm> alarms = ALARMS.bind(environment);
		alarms.forEach((name, alarm) -> alarm.check(ALARMS_PREFIX + "." + name));
		return new DuctorConfiguredAlarms(alarms);
	}

	/**
	 * Checks that every override names exactly one effect and every alarm runs one.
	 * @param environment the application's environment
	 * @param effects the names of the application's effects
	 * @param alarms the alarms bound from it
	 * @throws DuctorConfigurationException naming the first property that names no
	 * effect, where it was set, and the closest effect
	 */
	static void checkNames(Environment environment, Set<String> effects, DuctorConfiguredAlarms alarms) {
		for (DottedKeyBinder.Key key : OVERRIDES.scan(environment).values()) {
			List<String> named = effects.stream()
				.filter((effect) -> DuctorEffectOverrides.sameName(key.name(), effect))
				.sorted()
				.toList();
			String property = DottedKeyBinder.written(key.first().getName());
			if (named.isEmpty()) {
				throw new DuctorConfigurationException(
						property + " names an effect that does not exist (" + DottedKeyBinder.origin(key.first())
								+ "): no @DurableEffect method has the name '" + key.name() + "'; "
								+ Suggestions.didYouMean(key.name(), effects, "effects"),
						"Name an effect of the application in " + OVERRIDES_PREFIX
								+ ".<effect name>.<property>, or remove the property.");
			}
			if (named.size() > 1) {
				throw new DuctorConfigurationException(
						property + " (" + DottedKeyBinder.origin(key.first()) + ") names more than one effect: "
								+ String.join(", ", named)
								+ " differ only in case or dashes, which property names do not tell apart",
						"Give those effects names that differ in more than case and dashes.");
			}
		}
		Map<String, DottedKeyBinder.Key> alarmKeys = ALARMS.scan(environment);
		alarms.byName().forEach((name, alarm) -> {
			if (alarm.effect() != null && !effects.contains(alarm.effect())) {
				DottedKeyBinder.Key key = alarmKeys.get(name);
				String origin = (key != null) ? key.settings()
					.stream()
					.filter((setting) -> setting.property().toString().equals("effect"))
					.findFirst()
					.map((setting) -> " (" + DottedKeyBinder.origin(setting.value()) + ")")
					.orElse("") : "";
				throw new DuctorConfigurationException(
						ALARMS_PREFIX + "." + name + ".effect names an effect that does not exist" + origin
								+ ": no @DurableEffect method has" + " the name '" + alarm.effect() + "'; "
								+ Suggestions.didYouMean(alarm.effect(), effects, "effects"),
						"Set " + ALARMS_PREFIX + "." + name + ".effect to the name of an effect of the application.");
			}
		});
	}

}
