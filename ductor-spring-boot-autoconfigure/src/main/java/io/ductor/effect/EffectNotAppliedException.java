package io.ductor.effect;

/**
 * Thrown by an effect when it knows for certain the receiver did not apply the call (the
 * connection was refused before the request was sent, the receiver answered "not
 * processed"). For a {@link Receiver#NOT_IDEMPOTENT} receiver this is the only failure
 * Ductor retries automatically; every other failure leaves the outcome unknown and waits
 * for a decision.
 */
public class EffectNotAppliedException extends RuntimeException {

	public EffectNotAppliedException(String message) {
		super(message);
	}

	public EffectNotAppliedException(String message, Throwable cause) {
		super(message, cause);
	}

}
