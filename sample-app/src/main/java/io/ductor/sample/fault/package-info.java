/**
 * The sample shop: fault.
 */
@NullMarked
package io.ductor.sample.fault;

import org.jspecify.annotations.NullMarked;
