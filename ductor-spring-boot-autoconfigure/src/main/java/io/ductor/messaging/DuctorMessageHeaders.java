package io.ductor.messaging;

/**
 * The headers Ductor's relays put on every message they send, whatever the broker. The
 * trace context travels in the broker client's own propagation headers
 * ({@code traceparent} with W3C propagation) when observation is enabled.
 */
public final class DuctorMessageHeaders {

	/**
	 * The idempotency key of the intent that sent the message: the same on every attempt
	 * and every redelivery of one message, so it is the consumer's deduplication id
	 * ({@link IdempotentListener} reads it).
	 */
	public static final String IDEMPOTENCY_KEY = "ductor-idempotency-key";

	/**
	 * The content type header of a message whose body Ductor serialized.
	 */
	public static final String CONTENT_TYPE = "content-type";

	/**
	 * The content type of a body serialized by Ductor's JSON codec.
	 */
	public static final String JSON = "application/json";

	private DuctorMessageHeaders() {
	}

}
