package io.ductor.reliability.depot;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessagePostProcessor;
import org.springframework.amqp.core.MessageProperties;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.stereotype.Component;

import io.ductor.messaging.DuctorMessageHeaders;

/**
 * Every message the container hands to the listener, before the inbox sees it: one line
 * {@code <idempotency key> <redelivered> <delivery tag> <generation>}, appended in one
 * write (which survives {@code kill -9}).
 */
@Component
class DeliveryLog implements MessagePostProcessor {

	private final Path log;

	private final String generation;

	DeliveryLog(@Value("${depot.delivery-log}") Path log, @Value("${depot.generation}") String generation) {
		this.log = log;
		this.generation = generation;
	}

	@Override
	public Message postProcessMessage(Message message) {
		MessageProperties properties = message.getMessageProperties();
		String line = properties.getHeader(DuctorMessageHeaders.IDEMPOTENCY_KEY) + " " + properties.isRedelivered()
				+ " " + properties.getDeliveryTag() + " " + this.generation + "\n";
		try {
			Files.write(this.log, line.getBytes(StandardCharsets.UTF_8), StandardOpenOption.CREATE,
					StandardOpenOption.WRITE, StandardOpenOption.APPEND);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		return message;
	}

}
