/**
 * The sample shop.
 */
@NullMarked
package io.ductor.sample;

import org.jspecify.annotations.NullMarked;
