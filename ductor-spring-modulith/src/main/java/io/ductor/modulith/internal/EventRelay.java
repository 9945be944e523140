package io.ductor.modulith.internal;

import java.util.Map;

import org.jspecify.annotations.Nullable;

/**
 * One of Ductor's message relays, as the externalizer sees it: records a message in the
 * caller's transaction and returns its idempotency key.
 */
@FunctionalInterface
public interface EventRelay {

	/**
	 * @param target the routing target: a Kafka topic, a RabbitMQ exchange
	 * @param key the routing key: the record key, the AMQP routing key; {@code null} for
	 * none
	 * @param payload the payload, written as JSON by the relay
	 * @param headers headers to add to the message
	 * @return the idempotency key of the recorded message
	 */
	String record(String target, @Nullable String key, Object payload, Map<String, String> headers);

}
