package io.ductor.run;

/**
 * What {@link TickService#start} did.
 */
public enum StartOutcome {

	/** The run was created. */
	CREATED,

	/** A run with this id and type already existed; nothing was written. */
	ALREADY_STARTED

}
