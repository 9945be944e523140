package io.ductor.run;

/**
 * Where a run is in its life. Only {@link #ACTIVE} runs accept ticks.
 */
public enum RunStatus {

	/** Ticks advance the run. */
	ACTIVE,

	/** A step finished the run successfully; later ticks change nothing. */
	COMPLETED,

	/** A step finished the run as failed; later ticks change nothing. */
	FAILED;

	/**
	 * Whether the run is finished.
	 * @return {@code true} for {@link #COMPLETED} and {@link #FAILED}
	 */
	public boolean isTerminal() {
		return this != ACTIVE;
	}

}
