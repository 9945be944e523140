package io.ductor.run;

import java.time.OffsetDateTime;

import org.jspecify.annotations.Nullable;

/**
 * A run as stored in {@code eec_run}.
 *
 * @param id the run id
 * @param type the run type given at start
 * @param status the run's status
 * @param state the current state
 * @param recordVersion the optimistic-locking version: 1 at start, one more per applied
 * tick
 * @param lastTransitionSeq the sequence number of the last applied tick, 0 before the
 * first
 * @param failureReason why a step failed the run, or {@code null}
 * @param createdAt when the run was started (database clock)
 * @param updatedAt when the run last changed (database clock)
 * @param compensation how far the undo of a failed run got: {@link RunCompensation#NONE}
 * unless the run failed with compensations to run
 * @param <S> the state type
 */
public record Run<S>(String id, String type, RunStatus status, S state, long recordVersion, long lastTransitionSeq,
		@Nullable String failureReason, OffsetDateTime createdAt, OffsetDateTime updatedAt,
		RunCompensation compensation) {
}
