package io.ductor.messaging;

/**
 * What an {@link IdempotentListener} does with a message that has no
 * {@value DuctorMessageHeaders#IDEMPOTENCY_KEY} header (one not sent through Ductor).
 */
public enum MissingKeyPolicy {

	/**
	 * Throw {@link MissingIdempotencyKeyException} before the listener's body runs, so
	 * the container's error handler sees it (and, for example, sends the message to a
	 * dead-letter destination).
	 */
	REJECT,

	/**
	 * Deduplicate by the key that {@link IdempotentListener#key()} computes from the
	 * payload.
	 */
	KEY_FROM_PAYLOAD

}
