package io.ductor.amqp.internal;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.HexFormat;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.springframework.amqp.AmqpException;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageDeliveryMode;
import org.springframework.amqp.core.MessageProperties;
import org.springframework.amqp.core.ReturnedMessage;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;
import org.springframework.amqp.rabbit.connection.CorrelationData;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.beans.factory.DisposableBean;

import io.ductor.amqp.DurableRabbit;
import io.ductor.effect.DurableEffect;
import io.ductor.effect.EffectContext;
import io.ductor.effect.internal.AttemptReceipt;
import io.ductor.internal.Ids;
import io.ductor.messaging.DuctorMessageHeaders;

/**
 * The built-in effect {@value DurableRabbit#EFFECT}: publishes one message on a
 * connection of its own with publisher confirms and returns, mandatory, and completes
 * only when the broker confirmed it. A returned (unroutable) message, a negative
 * acknowledgement, no confirm within the timeout, or a failed send throws
 * {@link RabbitPublishException}, so the attempt is retried.
 */
public class RabbitRelay implements DisposableBean {

	private final CachingConnectionFactory connectionFactory;

	private final RabbitTemplate template;

	private final Duration confirmTimeout;

	private final MessageMetrics metrics;

	/**
	 * @param connectionFactory the relay's own factory, with correlated publisher
	 * confirms and returns; closed with the relay
	 * @param template a template on it, mandatory
	 * @param confirmTimeout the longest wait for the broker's confirm
	 * @param metrics what is told about the messages
	 */
	public RabbitRelay(CachingConnectionFactory connectionFactory, RabbitTemplate template, Duration confirmTimeout,
			MessageMetrics metrics) {
		if (!connectionFactory.isPublisherConfirms() || !connectionFactory.isPublisherReturns()) {
			throw new IllegalArgumentException(
					"The relay's connection factory needs correlated publisher confirms " + "and publisher returns");
		}
		this.connectionFactory = connectionFactory;
		this.template = template;
		this.template.setMandatory(true);
		this.confirmTimeout = confirmTimeout;
		this.metrics = metrics;
	}

	/**
	 * The ordering key of the messages to one exchange with one routing key (exchange
	 * names hold no {@code /}): the same for the same pair, at most
	 * {@value Ids#MAX_LENGTH} characters. A pair too long for it (a routing key may have
	 * 255 bytes) is keyed by its SHA-256 digest.
	 * @param exchange the exchange
	 * @param routingKey the routing key
	 * @return the ordering key
	 */
	public static String orderingKey(String exchange, String routingKey) {
		String plain = "rabbitmq:" + exchange + "/" + routingKey;
		if (plain.length() <= Ids.MAX_LENGTH) {
			return plain;
		}
		try {
			byte[] digest = MessageDigest.getInstance("SHA-256").digest(plain.getBytes(StandardCharsets.UTF_8));
			return "rabbitmq:sha256:" + HexFormat.of().formatHex(digest);
		}
		catch (NoSuchAlgorithmException impossible) {
			throw new IllegalStateException(impossible);
		}
	}

	/**
	 * Publish one message and wait for the broker's confirm; run by the drainer, never
	 * called directly (a call records an intent).
	 * @param exchange the exchange
	 * @param routingKey the routing key
	 * @param headers the message's own headers
	 * @param body the body, JSON text
	 */
	@DurableEffect(name = DurableRabbit.EFFECT, orderingKey = "'rabbitmq:' + #p0 + '/' + #p1")
	public void send(String exchange, String routingKey, Map<String, String> headers, String body) {
		EffectContext context = EffectContext.current();
		String key = context.idempotencyKey();
		String destination = destination(exchange, routingKey);
		String where = "exchange '" + exchange + "' with routing key '" + routingKey + "'";
		MessageProperties properties = new MessageProperties();
		headers.forEach(properties::setHeader);
		properties.setHeader(DuctorMessageHeaders.IDEMPOTENCY_KEY, key);
		properties.setMessageId(key);
		properties.setContentType(DuctorMessageHeaders.JSON);
		properties.setContentEncoding("UTF-8");
		properties.setDeliveryMode(MessageDeliveryMode.PERSISTENT);
		CorrelationData correlation = new CorrelationData(key + "#" + context.attempt() + "#" + UUID.randomUUID());
		try {
			this.template.send(exchange, routingKey, new Message(body.getBytes(StandardCharsets.UTF_8), properties),
					correlation);
		}
		catch (AmqpException ex) {
			this.metrics.failed(destination);
			throw new RabbitPublishException("Could not publish the message to " + where + ": " + ex.getMessage(), ex);
		}
		this.metrics.sent(destination);
		CorrelationData.Confirm confirm = awaitConfirm(correlation, where, destination);
		// a returned message is set on the correlation before its confirm completes
		ReturnedMessage returned = correlation.getReturned();
		if (returned != null) {
			this.metrics.returned(destination);
			throw new RabbitPublishException("RabbitMQ returned the message as unroutable: " + where
					+ " routes it to no queue (" + returned.getReplyCode() + " " + returned.getReplyText()
					+ "); bind a queue or correct the destination");
		}
		if (!confirm.ack()) {
			this.metrics.failed(destination);
			throw new RabbitPublishException("RabbitMQ did not confirm the message to " + where + " (nack"
					+ ((confirm.reason() != null) ? ": " + confirm.reason() : "") + ")");
		}
		this.metrics.acknowledged(destination, (context.attempt() == 1) ? context.scheduledAt() : null);
		// a publisher confirm's delivery tag numbers the messages of one channel: nothing
		// to look up later, so the receipt says what the broker confirmed and where to
		AttemptReceipt.record("confirmed by RabbitMQ: " + where);
	}

	private CorrelationData.Confirm awaitConfirm(CorrelationData correlation, String where, String destination) {
		try {
			return correlation.getFuture().get(this.confirmTimeout.toNanos(), TimeUnit.NANOSECONDS);
		}
		catch (TimeoutException ex) {
			this.metrics.failed(destination);
			throw new RabbitPublishException("RabbitMQ did not confirm the message to " + where + " within "
					+ this.confirmTimeout + " (ductor.amqp.confirm-timeout); it is sent again", ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			this.metrics.failed(destination);
			throw new RabbitPublishException(
					"Interrupted while waiting for RabbitMQ to confirm the message to " + where, ex);
		}
		catch (ExecutionException ex) {
			this.metrics.failed(destination);
			throw new RabbitPublishException(
					"RabbitMQ did not confirm the message to " + where + ": " + ex.getCause().getMessage(), ex);
		}
	}

	/**
	 * The {@code destination} tag of a message: its exchange, or the queue it is
	 * addressed to through the default exchange.
	 */
	static String destination(String exchange, String routingKey) {
		return exchange.isEmpty() ? routingKey : exchange;
	}

	/**
	 * @return the relay's connection factory
	 */
	public CachingConnectionFactory connectionFactory() {
		return this.connectionFactory;
	}

	@Override
	public void destroy() {
		this.connectionFactory.destroy();
	}

}
