package io.ductor.idempotency;

import io.ductor.DuctorException;

/**
 * An idempotency key was reused for a different request: the stored or in-flight request with
 * this key has another fingerprint. Nothing was written.
 */
public class FingerprintMismatchException extends DuctorException {

	public FingerprintMismatchException(String message) {
		super(message);
	}

}
