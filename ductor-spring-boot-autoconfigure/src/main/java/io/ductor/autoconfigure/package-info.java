/**
 * Ductor's core auto-configuration and its {@code ductor.*} properties.
 */
@NullMarked
package io.ductor.autoconfigure;

import org.jspecify.annotations.NullMarked;
