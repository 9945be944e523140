package io.ductor.run;

import io.ductor.DuctorException;

/**
 * A run id was started again with a different type than the one it was created with.
 */
public class RunTypeMismatchException extends DuctorException {

	public RunTypeMismatchException(String runId, String existingType, String requestedType) {
		super("Run '" + runId + "' already exists with type '" + existingType + "', cannot start it as '"
				+ requestedType + "'; run ids must be unique across run types");
	}

}
