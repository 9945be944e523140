/**
 * Ductor's Micrometer observations: their documentation, context and conventions.
 */
@NullMarked
package io.ductor.observation;

import org.jspecify.annotations.NullMarked;
