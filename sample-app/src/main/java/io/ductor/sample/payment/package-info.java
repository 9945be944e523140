/**
 * The sample shop: payment.
 */
@NullMarked
package io.ductor.sample.payment;

import org.jspecify.annotations.NullMarked;
