/**
 * The reliability suite's workload: workload.
 */
@NullMarked
package io.ductor.reliability.workload;

import org.jspecify.annotations.NullMarked;
