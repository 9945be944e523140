package io.ductor.idempotency;

/**
 * An idempotency key is malformed: too long or with characters outside visible ASCII. Nothing
 * was written.
 */
public class InvalidIdempotencyKeyException extends IllegalArgumentException {

	public InvalidIdempotencyKeyException(String message) {
		super(message);
	}

}
