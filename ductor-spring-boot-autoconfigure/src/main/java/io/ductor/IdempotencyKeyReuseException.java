package io.ductor;

/**
 * An idempotency key was used again for something else: for another effect or other
 * arguments (a key stays bound to its operation and payload for the life of the intent),
 * or for a request with another fingerprint than the stored or in-flight request with
 * this key. Nothing was written; a new request needs a new key.
 */
public class IdempotencyKeyReuseException extends DuctorException {

	public IdempotencyKeyReuseException(String message) {
		super(message);
	}

}
