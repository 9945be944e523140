/**
 * The reliability suite's workload: booking.
 */
@NullMarked
package io.ductor.reliability.booking;

import org.jspecify.annotations.NullMarked;
