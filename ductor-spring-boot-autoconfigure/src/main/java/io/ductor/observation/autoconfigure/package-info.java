/**
 * Auto-configuration of Ductor's observations and tracing.
 */
@NullMarked
package io.ductor.observation.autoconfigure;

import org.jspecify.annotations.NullMarked;
