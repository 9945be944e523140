/**
 * The reliability suite's workload: meet.
 */
@NullMarked
package io.ductor.reliability.meet;

import org.jspecify.annotations.NullMarked;
