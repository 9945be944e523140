package io.ductor.reliability.shipping;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.Header;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.kafka.listener.RecordInterceptor;
import org.springframework.stereotype.Component;

import io.ductor.messaging.DuctorMessageHeaders;

/**
 * Every record the container hands to the listener, before the inbox sees it: one line
 * {@code <idempotency key> <partition> <offset> <generation>}, appended in one write
 * (which survives {@code kill -9}).
 */
@Component
class DeliveryLog implements RecordInterceptor<Object, Object> {

	private final Path log;

	private final String generation;

	DeliveryLog(@Value("${shipping.delivery-log}") Path log, @Value("${shipping.generation}") String generation) {
		this.log = log;
		this.generation = generation;
	}

	@Override
	public ConsumerRecord<Object, Object> intercept(ConsumerRecord<Object, Object> record,
			Consumer<Object, Object> consumer) {
		String line = header(record, DuctorMessageHeaders.IDEMPOTENCY_KEY) + " " + record.partition() + " "
				+ record.offset() + " " + this.generation + "\n";
		try {
			Files.write(this.log, line.getBytes(StandardCharsets.UTF_8), StandardOpenOption.CREATE,
					StandardOpenOption.WRITE, StandardOpenOption.APPEND);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		return record;
	}

	static @Nullable String header(ConsumerRecord<?, ?> record, String name) {
		Header header = record.headers().lastHeader(name);
		return (header != null) ? new String(header.value(), StandardCharsets.UTF_8) : null;
	}

}
