package io.ductor.run.internal;

/**
 * Told, inside the transaction of the tick that fails a run, that the run failed:
 * Ductor's effects record the run's compensations here, so that they commit with the
 * failure or not at all.
 */
@FunctionalInterface
public interface RunFailureHandler {

	/** Does nothing. */
	RunFailureHandler NONE = (runId) -> 0;

	/**
	 * The run failed in the current transaction.
	 * @param runId the run
	 * @return how many new compensations were recorded; more than 0 marks the run
	 * {@link RunCompensation#COMPENSATING}
	 */
	int runFailed(String runId);

}
