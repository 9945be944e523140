package io.ductor.amqp;

import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

import org.jspecify.annotations.Nullable;

import io.ductor.messaging.DuctorMessageHeaders;

/**
 * A message for {@link DurableRabbit#send(RabbitMessage)}.
 *
 * @param exchange the exchange, {@code ""} for the default exchange
 * @param routingKey the routing key
 * @param payload the body, written as JSON with the application's JSON mapper
 * @param headers headers of its own; {@code ductor-idempotency-key} is Ductor's
 * @param key the idempotency key, or {@code null} for a fresh one
 * @throws IllegalArgumentException when the exchange, the routing key or the key has more
 * than 255 bytes in UTF-8, more than AMQP carries
 */
public record RabbitMessage(String exchange, String routingKey, @Nullable Object payload, Map<String, String> headers,
		@Nullable String key) {

	private static final int MAX_SHORT_STRING = 255;

	public RabbitMessage {
		Objects.requireNonNull(exchange, "exchange must not be null");
		Objects.requireNonNull(routingKey, "routingKey must not be null");
		shortString("exchange", exchange);
		shortString("routingKey", routingKey);
		if (key != null) {
			shortString("key", key);
		}
		headers = Map.copyOf(Objects.requireNonNull(headers, "headers must not be null"));
		if (headers.keySet().stream().anyMatch(DuctorMessageHeaders.IDEMPOTENCY_KEY::equalsIgnoreCase)) {
			throw new IllegalArgumentException("The header " + DuctorMessageHeaders.IDEMPOTENCY_KEY
					+ " is set by Ductor to the message's idempotency key; pass the key with withKey(..) instead");
		}
	}

	/**
	 * AMQP carries an exchange, a routing key and a message id as short strings: a value
	 * longer could be recorded, but never published.
	 */
	private static void shortString(String what, String value) {
		int bytes = value.getBytes(StandardCharsets.UTF_8).length;
		if (bytes > MAX_SHORT_STRING) {
			throw new IllegalArgumentException(what + " must be at most " + MAX_SHORT_STRING
					+ " bytes in UTF-8 (an AMQP short string) but has " + bytes);
		}
	}

	/**
	 * A message without headers of its own.
	 * @param exchange the exchange, {@code ""} for the default exchange
	 * @param routingKey the routing key
	 * @param payload the body
	 * @return the message
	 */
	public static RabbitMessage of(String exchange, String routingKey, @Nullable Object payload) {
		return new RabbitMessage(exchange, routingKey, payload, Map.of(), null);
	}

	/**
	 * @param key the idempotency key, at most 200 characters @return a copy with that key
	 */
	public RabbitMessage withKey(String key) {
		return new RabbitMessage(this.exchange, this.routingKey, this.payload, this.headers, key);
	}

	/**
	 * @param name a header name @param value its value @return a copy with that header
	 * too
	 */
	public RabbitMessage withHeader(String name, String value) {
		Map<String, String> headers = new LinkedHashMap<>(this.headers);
		headers.put(name, value);
		return new RabbitMessage(this.exchange, this.routingKey, this.payload, headers, this.key);
	}

	/**
	 * @param headers headers @return a copy with those headers too
	 */
	public RabbitMessage withHeaders(Map<String, String> headers) {
		Map<String, String> all = new LinkedHashMap<>(this.headers);
		all.putAll(headers);
		return new RabbitMessage(this.exchange, this.routingKey, this.payload, all, this.key);
	}

}
