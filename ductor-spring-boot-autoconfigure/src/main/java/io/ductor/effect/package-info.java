/**
 * Durable effects: {@code @DurableEffect} methods, the producer's
 * {@link io.ductor.effect.EffectOutbox}, the operator's
 * {@link io.ductor.effect.EffectOperations}, {@link io.ductor.effect.RecurringAlarms} and
 * the types they speak.
 */
@NullMarked
package io.ductor.effect;

import org.jspecify.annotations.NullMarked;
