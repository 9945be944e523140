package io.ductor.run;

/**
 * What a tick did.
 *
 * @param result applied, duplicate or terminal
 * @param runId the run
 * @param state the run's state after the call: the new state when applied, the stored one
 * otherwise
 * @param runStatus the run's status after the call
 * @param recordVersion the run's version after the call
 * @param seq the run's last transition sequence number after the call
 * @param attempts how often the tick was computed: more than 1 after losing races to
 * concurrent ticks
 * @param <S> the state type
 */
public record TickOutcome<S>(Result result, String runId, S state, RunStatus runStatus, long recordVersion, long seq,
		int attempts) {

	/**
	 * The three things a tick can do.
	 */
	public enum Result {

		/** The step ran and its state committed with one new transition. */
		APPLIED,

		/** The stamp had been applied before: zero rows were written. */
		DUPLICATE,

		/** The run was already finished: zero rows were written. */
		TERMINAL

	}

	/**
	 * @return whether the tick committed a transition
	 */
	public boolean applied() {
		return this.result == Result.APPLIED;
	}

}
