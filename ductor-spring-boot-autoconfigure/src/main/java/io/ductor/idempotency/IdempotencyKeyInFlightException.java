package io.ductor.idempotency;

import io.ductor.DuctorException;

/**
 * Another request with the same idempotency key is still being processed: either the
 * duplicate policy is {@link DuplicatePolicy#REJECT}, or the wait for the first request
 * outlasted the wait timeout. Retrying later with the same key is safe.
 */
public class IdempotencyKeyInFlightException extends DuctorException {

	public IdempotencyKeyInFlightException(String message) {
		super(message);
	}

}
