/**
 * Ductor: what every feature shares, the root of its exceptions.
 */
@NullMarked
package io.ductor;

import org.jspecify.annotations.NullMarked;
