package io.ductor.run;

/**
 * How far the undo of a failed run got, as stored in {@code eec_run.compensation}. A run
 * whose ticks registered compensations for effects that may have reached their receivers
 * is {@link #COMPENSATING} from the transaction that failed it until every one of those
 * compensations finished; its status stays {@link RunStatus#FAILED} throughout.
 */
public enum RunCompensation {

	/**
	 * Nothing was compensated: the run did not fail, or none of its steps had anything to
	 * undo.
	 */
	NONE,

	/**
	 * Compensations were recorded when the run failed, and not all of them finished yet.
	 */
	COMPENSATING,

	/**
	 * Every compensation of the run completed (or an operator marked it done or cancelled
	 * it).
	 */
	COMPENSATED;

}
