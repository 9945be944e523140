package io.ductor.run;

import io.ductor.DuctorException;

/**
 * A tick named a run that was never started.
 */
public class UnknownRunException extends DuctorException {

	public UnknownRunException(String runId) {
		super("No run with id '" + runId + "': start it with TickService.start(type, runId, initialState) first");
	}

}
