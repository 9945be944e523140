package io.ductor.run;

/**
 * The work of one tick: computes a run's next state from its current one. It runs inside
 * the tick's transaction, so whatever it writes through the same {@code DataSource}
 * (including recorded effects) commits with the tick or not at all. It may run more than
 * once when a concurrent tick wins the race, for its run or for another run it ticks;
 * only the run that commits counts, so it must not call other systems directly (record an
 * effect instead). It may tick other runs, which then advance in the same transaction,
 * but never its own run.
 *
 * @param <S> the state type
 */
@FunctionalInterface
public interface TickStep<S> {

	/**
	 * Compute the next state.
	 * @param state the current state
	 * @param tick this tick: its run, stamp and sequence number, and the means to finish
	 * the run
	 * @return the next state
	 */
	S apply(S state, Tick tick);

}
