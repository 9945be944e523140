package io.ductor.run;

import io.ductor.DuctorException;

/**
 * A tick lost the race for its run's {@code record_version} every time it was tried.
 * Nothing was written; re-submitting the same stamp later is safe.
 */
public class TickConflictException extends DuctorException {

	public TickConflictException(String message) {
		super(message);
	}

}
