package io.ductor.modulith;

/**
 * What an application sees of Spring Modulith's event publications on Ductor: each
 * publication (one event for one transactional listener) is an effect intent of
 * {@link #EFFECT_NAME}, whose idempotency key is the publication's identifier.
 * <p>
 * Inside the listener, {@code EffectContext.current().idempotencyKey()} is that stable
 * key: a listener that deduplicates by it applies each publication once, however often it
 * is delivered. Retry settings come from {@code ductor.effects.*} and its per-effect
 * overrides ({@code ductor.effects.overrides[modulith.publication].max-attempts}).
 */
public final class ModulithPublications {

	/** The effect name of every Modulith event publication. */
	public static final String EFFECT_NAME = "modulith.publication";

	private ModulithPublications() {
	}

}
