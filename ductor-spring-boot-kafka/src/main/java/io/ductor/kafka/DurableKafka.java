package io.ductor.kafka;

import java.util.Map;

import org.jspecify.annotations.Nullable;

/**
 * Sends Kafka records once the caller's transaction commits: a call records the message
 * as an effect intent (named {@value #EFFECT_NAME}) in that transaction and returns; a
 * rolled-back transaction sends nothing. After the commit Ductor's relay sends the record
 * with the payload as JSON ({@code content-type: application/json}), the record key as
 * the Kafka key, the intent's idempotency key in the {@code ductor-idempotency-key}
 * header and the trace context, and completes the intent only when the broker
 * acknowledged it ({@code acks=all}, idempotent producer). Records with one key on one
 * topic are sent one at a time, in commit order, so they reach one partition in that
 * order. A send that fails or is not acknowledged within
 * {@code ductor.kafka.send-timeout} is retried with the effects' backoff, and the intent
 * is visible to operators like any other ({@code failed} after
 * {@code ductor.effects.max-attempts}).
 * <p>
 * A retried send can reach the broker twice (the first attempt was written but its
 * acknowledgement was lost): both copies carry the same {@code ductor-idempotency-key},
 * which {@link io.ductor.messaging.IdempotentListener} applies once.
 */
public interface DurableKafka {

	/**
	 * The name of the built-in effect whose intents are the recorded messages.
	 */
	String EFFECT_NAME = "ductor.kafka.send";

	/**
	 * Record a message to send once the caller's transaction commits.
	 * @param topic the topic
	 * @param key the record key, or {@code null} for none (and no ordering)
	 * @param payload the payload, serialized as JSON with the application's JSON mapper
	 * @return the idempotency key of the message (its intent), which the consumer sees in
	 * the {@code ductor-idempotency-key} header
	 * @throws io.ductor.effect.DurableEffectException without a transaction, or when the
	 * payload cannot be stored
	 */
	default String send(String topic, @Nullable String key, Object payload) {
		return send(topic, key, payload, Map.of());
	}

	/**
	 * Record a message with headers of its own to send once the caller's transaction
	 * commits.
	 * @param topic the topic
	 * @param key the record key, or {@code null} for none (and no ordering)
	 * @param payload the payload, serialized as JSON with the application's JSON mapper
	 * @param headers headers to add to the record, as UTF-8 text; not
	 * {@code ductor-idempotency-key}, which Ductor sets to the message's idempotency key
	 * @return the idempotency key of the message
	 * @throws io.ductor.effect.DurableEffectException without a transaction, or when the
	 * payload cannot be stored
	 * @throws IllegalArgumentException when {@code headers} names
	 * {@code ductor-idempotency-key}, or {@code topic} is not a valid Kafka topic name
	 */
	String send(String topic, @Nullable String key, Object payload, Map<String, String> headers);

	/**
	 * Record a message with an idempotency key of the caller's choosing (an event id):
	 * recording it again with the same key and the same message records nothing new, with
	 * another message throws {@link io.ductor.IdempotencyKeyReuseException}.
	 * @param idempotencyKey the message's idempotency key, an identifier of at most 200
	 * characters
	 * @param topic the topic
	 * @param key the record key, or {@code null}
	 * @param payload the payload
	 * @param headers headers to add to the record
	 * @return {@code idempotencyKey}
	 */
	String send(String idempotencyKey, String topic, @Nullable String key, Object payload, Map<String, String> headers);

}
