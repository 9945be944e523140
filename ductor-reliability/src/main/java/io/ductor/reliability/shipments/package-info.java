/**
 * The reliability suite's Kafka crash: the producing application.
 */
@NullMarked
package io.ductor.reliability.shipments;

import org.jspecify.annotations.NullMarked;
