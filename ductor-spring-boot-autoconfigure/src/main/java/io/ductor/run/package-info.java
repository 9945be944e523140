/**
 * Durable runs: {@link io.ductor.run.TickService} starts them and advances them with
 * ticks, exactly once per stamp.
 */
@NullMarked
package io.ductor.run;

import org.jspecify.annotations.NullMarked;
