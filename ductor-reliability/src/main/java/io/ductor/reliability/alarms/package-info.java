/**
 * The reliability suite's workload: alarms.
 */
@NullMarked
package io.ductor.reliability.alarms;

import org.jspecify.annotations.NullMarked;
