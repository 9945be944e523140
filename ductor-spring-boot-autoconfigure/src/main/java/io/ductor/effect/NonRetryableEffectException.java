package io.ductor.effect;

/**
 * Thrown by an effect to fail its intent at once: retrying cannot help (the request is
 * invalid, the receiver refused it for good). The intent becomes {@code failed} with this
 * message.
 */
public class NonRetryableEffectException extends RuntimeException {

	public NonRetryableEffectException(String message) {
		super(message);
	}

	public NonRetryableEffectException(String message, Throwable cause) {
		super(message, cause);
	}

}
