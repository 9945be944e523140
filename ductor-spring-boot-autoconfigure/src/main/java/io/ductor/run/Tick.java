package io.ductor.run;

/**
 * The tick a {@link TickStep} is computing, and the means to finish the run with it.
 */
public interface Tick {

	/**
	 * @return the run being advanced
	 */
	String runId();

	/**
	 * @return this tick's stamp
	 */
	String stamp();

	/**
	 * @return the sequence number this tick gets if it commits
	 */
	long seq();

	/**
	 * @return 1 for the first computation, more when a version conflict made the tick
	 * recompute
	 */
	int attempt();

	/** Finish the run successfully when this tick commits. */
	void complete();

	/**
	 * Finish the run as failed when this tick commits.
	 * @param reason why, kept with the run
	 * @throws IllegalArgumentException when {@code reason} is blank
	 */
	void fail(String reason);

}
