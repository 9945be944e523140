package io.ductor.effect;

/**
 * The concurrency limit of one effect and how much of it is in use, across every
 * instance.
 *
 * @param effectName the effect
 * @param limit its limit: the most attempts that run at once
 * @param inUse its slots held now: attempts in flight under a live lease
 */
public record EffectConcurrency(String effectName, int limit, int inUse) {
}
