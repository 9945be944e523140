package io.ductor.amqp.internal;

import java.lang.reflect.Method;

import org.jspecify.annotations.Nullable;

import org.springframework.amqp.core.Message;

import io.ductor.messaging.ListenerMessageReader;

/**
 * Reads the headers of an AMQP {@link Message} argument of a {@code @RabbitListener}
 * method, and gives that message as the payload of
 * {@link io.ductor.messaging.IdempotentListener#key()} (so the expression can read
 * {@code messageProperties.messageId} or {@code body}). Spring Messaging's
 * {@code Message<?>} and {@code @Header} arguments are read by Ductor's own reader.
 */
public class AmqpMessageReader implements ListenerMessageReader {

	@Override
	public @Nullable String header(Method method, @Nullable Object[] arguments, String name) {
		for (Object argument : arguments) {
			if (argument instanceof Message message) {
				Object value = message.getMessageProperties().getHeader(name);
				if (value != null) {
					return ListenerMessageReader.text(value);
				}
			}
		}
		return null;
	}

	@Override
	public @Nullable Object payload(Method method, @Nullable Object[] arguments) {
		for (Object argument : arguments) {
			if (argument instanceof Message message) {
				return message;
			}
		}
		return null;
	}

}
