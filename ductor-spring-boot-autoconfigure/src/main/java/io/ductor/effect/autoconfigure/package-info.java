/**
 * Auto-configuration of durable effects and their {@code ductor.effects.*} properties.
 */
@NullMarked
package io.ductor.effect.autoconfigure;

import org.jspecify.annotations.NullMarked;
