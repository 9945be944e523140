package io.ductor.effect;

/**
 * Published when an intent reaches {@code needs_decision}: an attempt at a receiver that
 * cannot deduplicate ended with an unknown outcome. Resolve it with
 * {@link EffectOutbox#resolve(long, EffectResolution)} once you know what the receiver
 * did.
 *
 * @param intentId the intent
 * @param effectName its effect
 * @param idempotencyKey its key
 */
public record EffectNeedsDecisionEvent(long intentId, String effectName, String idempotencyKey) {
}
