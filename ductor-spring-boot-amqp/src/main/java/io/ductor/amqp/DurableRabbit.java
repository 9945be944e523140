package io.ductor.amqp;

import java.util.Map;

import org.jspecify.annotations.Nullable;

/**
 * Publishes RabbitMQ messages in the caller's transaction: a call records an intent of
 * the built-in effect {@value #EFFECT} in that transaction and returns; after the commit
 * Ductor's drainer publishes the message and completes the intent only when the broker
 * confirmed it. A rolled-back transaction publishes nothing. Messages to one exchange and
 * routing key are published one at a time, in commit order. Each message carries the
 * intent's idempotency key as its AMQP {@code message-id} and in the header
 * {@code ductor-idempotency-key}, for the consumer to apply it once.
 * <p>
 * A message the broker returns as unroutable (no queue bound for its routing key), a
 * negative acknowledgement, or no confirm within {@code ductor.amqp.confirm-timeout}
 * fails the attempt: it is retried with the effect's backoff and, after its last attempt,
 * marked {@code failed} with the reason, like any effect
 * ({@code ductor.effects.overrides."ductor.amqp.send".*} tunes it).
 */
public interface DurableRabbit {

	/** The name of the effect whose intents carry the messages. */
	String EFFECT = "ductor.amqp.send";

	/**
	 * Publish {@code payload}, written as JSON, to {@code exchange} with
	 * {@code routingKey} once the caller's transaction commits.
	 * @param exchange the exchange, {@code ""} for the default exchange
	 * @param routingKey the routing key
	 * @param payload the message body, written with the application's JSON mapper
	 * @return the idempotency key of the message
	 * @throws io.ductor.effect.DurableEffectException without a transaction
	 */
	default String send(String exchange, String routingKey, @Nullable Object payload) {
		return send(RabbitMessage.of(exchange, routingKey, payload));
	}

	/**
	 * Publish {@code payload} with headers of its own once the caller's transaction
	 * commits.
	 * @param exchange the exchange, {@code ""} for the default exchange
	 * @param routingKey the routing key
	 * @param payload the message body, written with the application's JSON mapper
	 * @param headers headers to send with the message
	 * @return the idempotency key of the message
	 * @throws io.ductor.effect.DurableEffectException without a transaction
	 */
	default String send(String exchange, String routingKey, @Nullable Object payload, Map<String, String> headers) {
		return send(RabbitMessage.of(exchange, routingKey, payload).withHeaders(headers));
	}

	/**
	 * Publish {@code message} once the caller's transaction commits. With a key of its
	 * own, sending it again with the same key and body records nothing new.
	 * @param message the message
	 * @return the idempotency key of the message
	 * @throws io.ductor.effect.DurableEffectException without a transaction
	 * @throws io.ductor.IdempotencyKeyReuseException when the key was used for another
	 * message
	 */
	String send(RabbitMessage message);

}
