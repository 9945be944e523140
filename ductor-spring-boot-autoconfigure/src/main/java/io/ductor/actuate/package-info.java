/**
 * The {@code ductor} actuator endpoint: who may act on intents through it.
 */
@NullMarked
package io.ductor.actuate;

import org.jspecify.annotations.NullMarked;
