/**
 * The sample shop: order.
 */
@NullMarked
package io.ductor.sample.order;

import org.jspecify.annotations.NullMarked;
