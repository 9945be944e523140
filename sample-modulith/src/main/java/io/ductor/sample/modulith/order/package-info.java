/**
 * The order module: completes orders and publishes {@link OrderCompleted}.
 */
@NullMarked
package io.ductor.sample.modulith.order;

import org.jspecify.annotations.NullMarked;
