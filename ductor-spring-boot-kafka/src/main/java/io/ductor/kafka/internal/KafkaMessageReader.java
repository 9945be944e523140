package io.ductor.kafka.internal;

import java.lang.annotation.Annotation;
import java.lang.reflect.Method;
import java.util.List;

import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.Header;
import org.jspecify.annotations.Nullable;

import org.springframework.kafka.support.Acknowledgment;
import org.springframework.messaging.Message;
import org.springframework.messaging.handler.annotation.Payload;

import io.ductor.messaging.ListenerMessageReader;

/**
 * Reads a {@link ConsumerRecord} argument of a {@code @KafkaListener} method (its last
 * header of the name, its value), and finds the payload among arguments that are not
 * Kafka's own ({@link Acknowledgment}, {@link Consumer}) or annotated.
 */
public class KafkaMessageReader implements ListenerMessageReader {

	@Override
	public @Nullable String header(Method method, @Nullable Object[] arguments, String name) {
		for (Object argument : arguments) {
			if (argument instanceof ConsumerRecord<?, ?> record) {
				Header header = record.headers().lastHeader(name);
				return (header != null) ? ListenerMessageReader.text(header.value()) : null;
			}
		}
		return null;
	}

	@Override
	public @Nullable Object payload(Method method, @Nullable Object[] arguments) {
		Annotation[][] annotations = method.getParameterAnnotations();
		Object candidate = null;
		int candidates = 0;
		for (int i = 0; i < arguments.length; i++) {
			Object argument = arguments[i];
			if (argument instanceof ConsumerRecord<?, ?> record) {
				return record.value();
			}
			for (Annotation annotation : annotations[i]) {
				if (annotation instanceof Payload) {
					return argument;
				}
			}
			if (argument instanceof Message<?> || argument instanceof Acknowledgment
					|| argument instanceof Consumer<?, ?> || argument instanceof List<?> || annotations[i].length > 0) {
				continue;
			}
			candidate = argument;
			candidates++;
		}
		return (candidates == 1) ? candidate : null;
	}

}
