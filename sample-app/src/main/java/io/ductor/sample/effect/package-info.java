/**
 * The sample shop: effect.
 */
@NullMarked
package io.ductor.sample.effect;

import org.jspecify.annotations.NullMarked;
