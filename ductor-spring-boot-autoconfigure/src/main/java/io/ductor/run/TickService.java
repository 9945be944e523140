package io.ductor.run;

import java.util.List;
import java.util.Optional;

import org.jspecify.annotations.Nullable;

/**
 * Starts durable runs and advances them with ticks, exactly once per stamp.
 * <p>
 * A tick reads the run, runs its {@link TickStep} on the current state and commits the
 * new state with a conditional update on {@code record_version} that also appends one
 * {@code eec_run_transition} row, all in one transaction. A stamp that was applied before
 * writes nothing and answers {@link TickOutcome.Result#DUPLICATE}; a finished run answers
 * {@link TickOutcome.Result#TERMINAL}. When a concurrent tick wins the race the
 * transaction rolls back and the tick re-reads and recomputes after a jittered backoff,
 * up to the configured number of attempts, then throws {@link TickConflictException}.
 * <p>
 * The first attempt reads without a lock, so uncontended ticks never wait for each other.
 * A retry reads the run {@code FOR NO KEY UPDATE}: it queues behind the tick that beat it
 * instead of racing every newcomer again, so a busy run cannot starve one of its ticks.
 * The conditional update on {@code record_version} stays the authority either way.
 * <p>
 * Called inside a transaction on Ductor's {@code DataSource} (one that has that
 * {@code DataSource} bound, as {@code DataSourceTransactionManager} and
 * {@code JpaTransactionManager} on it do), a tick joins it: its writes commit with the
 * caller's, and a conflict is not retried (the caller's transaction is marked
 * rollback-only and {@link TickConflictException} is thrown) because only the caller can
 * redo its own work. Called inside a transaction of another resource only (another
 * {@code DataSource}'s transaction manager), a tick runs in a transaction of its own,
 * commits before it returns whatever the caller's transaction does later, and retries
 * conflicts as it does outside any transaction.
 * <p>
 * A step may tick another run. That nested tick joins the enclosing tick's transaction,
 * so both runs advance together or not at all; when the nested run was advanced
 * concurrently, the enclosing tick that opened the transaction rolls it back and
 * recomputes its own step (which ticks the nested run again), within its own
 * {@code ductor.ticks.max-attempts}. A step may not tick its own run, directly or through
 * other runs' steps: that tick is refused at once with an {@link IllegalStateException}
 * and nothing is written.
 */
public interface TickService {

	/**
	 * Create a run, exactly once: starting an existing run id again with the same type
	 * writes nothing.
	 * @param type the run type, an identifier: 1 to 200 characters, not blank, without
	 * control characters
	 * @param runId the run id, an identifier unique across types
	 * @param initialState the first state, written as JSON
	 * @return whether the run was created or already existed
	 * @throws RunTypeMismatchException when the id exists with another type
	 */
	StartOutcome start(String type, String runId, Object initialState);

	/**
	 * Apply {@code step} to the run once for {@code stamp}.
	 * @param runId the run
	 * @param stamp what makes this tick unique within the run (an event id, an attempt's
	 * key)
	 * @param stateType the type the state is read as
	 * @param step the state change
	 * @param <S> the state type
	 * @return applied, duplicate or terminal, with the run's state after the call
	 */
	<S> TickOutcome<S> tick(String runId, String stamp, Class<S> stateType, TickStep<S> step);

	/**
	 * Apply {@code step} to the run once for {@code stamp}, recording {@code input} (for
	 * example the answer being folded into the run) with the transition.
	 * @param runId the run
	 * @param stamp what makes this tick unique within the run
	 * @param input what the tick folds in, written as JSON into the transition, or
	 * {@code null}
	 * @param stateType the type the state is read as
	 * @param step the state change
	 * @param <S> the state type
	 * @return applied, duplicate or terminal, with the run's state after the call
	 * @throws TickConflictException when concurrent ticks kept winning, or won while this
	 * tick ran inside the caller's transaction
	 * @throws IllegalStateException when called from the step of a tick of the same run
	 */
	<S> TickOutcome<S> tick(String runId, String stamp, @Nullable Object input, Class<S> stateType, TickStep<S> step);

	/**
	 * Record again the compensations of a run that already failed, in the caller's
	 * transaction or one of its own: those still to record (nothing, when the run failed
	 * with its compensations recorded, since each has a stable key), marking the run
	 * compensating when there are new ones. It is how an operator's {@code COMPENSATE}
	 * decision on a parked intent of a failed run undoes that step too.
	 * @param runId the failed run
	 * @return how many new compensations were recorded
	 * @throws IllegalStateException when the run is unknown or has not failed; nothing
	 * was written
	 */
	int compensateFailedRun(String runId);

	/**
	 * Read a run.
	 * @param runId the run
	 * @param stateType the type the state is read as
	 * @param <S> the state type
	 * @return the run, or empty when no run has this id
	 */
	<S> Optional<Run<S>> find(String runId, Class<S> stateType);

	/**
	 * Read a run's history.
	 * @param runId the run
	 * @return its transitions in sequence order, empty for an unknown run
	 */
	List<RunTransition> transitions(String runId);

}
