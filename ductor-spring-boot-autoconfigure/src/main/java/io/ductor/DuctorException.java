package io.ductor;

/**
 * Base class of the exceptions Ductor throws for conditions a caller can act on: bad
 * input, a conflict that outlasted its retries, a missing row.
 */
public class DuctorException extends RuntimeException {

	public DuctorException(String message) {
		super(message);
	}

	public DuctorException(String message, Throwable cause) {
		super(message, cause);
	}

}
