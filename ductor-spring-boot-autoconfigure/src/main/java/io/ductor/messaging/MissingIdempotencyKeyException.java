package io.ductor.messaging;

import io.ductor.DuctorException;

/**
 * A message reached an {@link IdempotentListener} without an idempotency key: no
 * {@value DuctorMessageHeaders#IDEMPOTENCY_KEY} header, and no key from the payload. The
 * listener's body did not run.
 */
public class MissingIdempotencyKeyException extends DuctorException {

	public MissingIdempotencyKeyException(String message) {
		super(message);
	}

}
