package io.ductor.idempotency;

import io.ductor.DuctorException;

/**
 * An idempotency key is malformed: too long or with characters outside visible ASCII.
 * Nothing was written.
 */
public class InvalidIdempotencyKeyException extends DuctorException {

	public InvalidIdempotencyKeyException(String message) {
		super(message);
	}

}
