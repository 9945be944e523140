package io.ductor.messaging;

import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;

import org.jspecify.annotations.Nullable;

/**
 * Reads a header and the payload of the message a listener method was called with, from
 * the method's arguments. Each broker module contributes one (Kafka's reads a
 * {@code ConsumerRecord}, RabbitMQ's an AMQP {@code Message}); Ductor's own reader
 * handles Spring Messaging's {@code Message<?>}, {@code @Header}, {@code @Headers} and
 * {@code @Payload} arguments. The readers are asked in their {@code @Order}, the first
 * answer wins.
 */
public interface ListenerMessageReader {

	/**
	 * The value of a header of the message.
	 * @param method the listener method
	 * @param arguments its arguments
	 * @param name the header's name
	 * @return the value as text, or {@code null} when this reader finds no such header
	 */
	@Nullable String header(Method method, @Nullable Object[] arguments, String name);

	/**
	 * The message's payload, for {@link IdempotentListener#key()}.
	 * @param method the listener method
	 * @param arguments its arguments
	 * @return the payload, or {@code null} when this reader does not find it
	 */
	@Nullable Object payload(Method method, @Nullable Object[] arguments);

	/**
	 * A header value as text: a {@code byte[]} (as Kafka carries headers) read as UTF-8,
	 * anything else by its {@code toString()}.
	 * @param value the header's value
	 * @return the text, or {@code null} for {@code null}
	 */
	static @Nullable String text(@Nullable Object value) {
		if (value == null) {
			return null;
		}
		if (value instanceof byte[] bytes) {
			return new String(bytes, StandardCharsets.UTF_8);
		}
		return value.toString();
	}

}
