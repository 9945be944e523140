package io.ductor.testing;

import java.util.List;

import org.assertj.core.api.AbstractAssert;
import tools.jackson.databind.json.JsonMapper;

import io.ductor.effect.EffectIntent;

/**
 * Assertions on the effect intents recorded since a test began, from
 * {@link DuctorTester#assertEffects()}.
 */
public class RecordedEffectsAssert extends AbstractAssert<RecordedEffectsAssert, List<EffectIntent>> {

	private final JsonMapper mapper;

	RecordedEffectsAssert(List<EffectIntent> actual, JsonMapper mapper) {
		super(actual, RecordedEffectsAssert.class);
		this.mapper = mapper;
	}

	/**
	 * Verifies that no effect was recorded.
	 * @return this
	 */
	public RecordedEffectsAssert isEmpty() {
		if (!this.actual.isEmpty()) {
			failWithMessage("Expected no effect to be recorded, but %d were: %s", this.actual.size(), names());
		}
		return this;
	}

	/**
	 * Verifies how many effects were recorded.
	 * @param expected how many
	 * @return this
	 */
	public RecordedEffectsAssert hasSize(int expected) {
		if (this.actual.size() != expected) {
			failWithMessage("Expected %d effect(s) to be recorded, but %d were: %s", expected, this.actual.size(),
					names());
		}
		return this;
	}

	/**
	 * Verifies that no effect of that name was recorded.
	 * @param effectName the effect's name
	 * @return this
	 */
	public RecordedEffectsAssert hasNo(String effectName) {
		List<EffectIntent> named = named(effectName);
		if (!named.isEmpty()) {
			failWithMessage("Expected no '%s' effect to be recorded, but %d were: %s", effectName, named.size(), named);
		}
		return this;
	}

	/**
	 * Verifies that exactly one effect of that name was recorded.
	 * @param effectName the effect's name
	 * @return assertions on it
	 */
	public RecordedEffectAssert hasOne(String effectName) {
		List<EffectIntent> named = named(effectName);
		if (named.size() != 1) {
			failWithMessage("Expected exactly one '%s' effect to be recorded, but %d were; recorded: %s", effectName,
					named.size(), names());
		}
		return new RecordedEffectAssert(named.get(0), this.mapper);
	}

	/**
	 * Verifies that an effect with that idempotency key was recorded.
	 * @param key the key
	 * @return assertions on it
	 */
	public RecordedEffectAssert withKey(String key) {
		return this.actual.stream()
			.filter((intent) -> intent.idempotencyKey().equals(key))
			.findFirst()
			.map((intent) -> new RecordedEffectAssert(intent, this.mapper))
			.orElseGet(() -> {
				failWithMessage("Expected an effect with key '%s' to be recorded; recorded: %s", key, names());
				return null;
			});
	}

	/**
	 * Verifies the names of the recorded effects, in the order they were recorded.
	 * @param effectNames the names
	 * @return this
	 */
	public RecordedEffectsAssert containsExactly(String... effectNames) {
		if (!names().equals(List.of(effectNames))) {
			failWithMessage("Expected the recorded effects to be %s, but they were %s", List.of(effectNames), names());
		}
		return this;
	}

	private List<EffectIntent> named(String effectName) {
		return this.actual.stream().filter((intent) -> intent.effectName().equals(effectName)).toList();
	}

	private List<String> names() {
		return this.actual.stream().map(EffectIntent::effectName).toList();
	}

}
