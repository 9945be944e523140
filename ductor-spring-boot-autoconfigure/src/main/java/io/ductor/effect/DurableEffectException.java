package io.ductor.effect;

import io.ductor.DuctorException;

/**
 * A durable effect was misused: called without a transaction, declared on a method that
 * cannot be intercepted, or given arguments or keys that cannot be stored.
 */
public class DurableEffectException extends DuctorException {

	public DurableEffectException(String message) {
		super(message);
	}

	public DurableEffectException(String message, Throwable cause) {
		super(message, cause);
	}

}
