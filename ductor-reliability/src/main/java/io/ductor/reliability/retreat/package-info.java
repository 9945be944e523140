/**
 * The reliability suite's workload: retreat.
 */
@NullMarked
package io.ductor.reliability.retreat;

import org.jspecify.annotations.NullMarked;
