package io.ductor.kafka.internal;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.beans.factory.DisposableBean;
import org.springframework.kafka.core.KafkaTemplate;
import org.springframework.kafka.core.ProducerFactory;
import org.springframework.kafka.support.SendResult;

import io.ductor.effect.DurableEffect;
import io.ductor.effect.EffectContext;
import io.ductor.effect.internal.AttemptReceipt;
import io.ductor.kafka.DurableKafka;
import io.ductor.messaging.DuctorMessageHeaders;

/**
 * The relay: the built-in effect {@value DurableKafka#EFFECT_NAME}, run by the drainer
 * after the commit, that sends one recorded message and returns only once the broker
 * acknowledged it. Anything else (an error, no acknowledgement within the send timeout)
 * throws, so the intent is retried with backoff.
 */
public class KafkaRelay implements DisposableBean {

	private static final Log logger = LogFactory.getLog(KafkaRelay.class);

	private final KafkaTemplate<String, byte[]> template;

	private final JsonMapper mapper;

	private final Duration sendTimeout;

	private final KafkaRelayMetrics metrics;

	public KafkaRelay(KafkaTemplate<String, byte[]> template, JsonMapper mapper, Duration sendTimeout,
			KafkaRelayMetrics metrics) {
		this.template = template;
		this.mapper = mapper;
		this.sendTimeout = sendTimeout;
		this.metrics = metrics;
	}

	/**
	 * Send one recorded message. Called by the drainer, never by applications.
	 * @param topic the topic
	 * @param key the record key, or {@code null}
	 * @param payload the payload
	 * @param headers the message's own headers
	 * @throws KafkaRelayException when the broker did not acknowledge the record
	 */
	@DurableEffect(name = DurableKafka.EFFECT_NAME)
	public void send(String topic, @Nullable String key, JsonNode payload, Map<String, String> headers) {
		EffectContext context = EffectContext.current();
		RecordHeaders recordHeaders = new RecordHeaders();
		headers.forEach((name, value) -> recordHeaders.add(name, value.getBytes(StandardCharsets.UTF_8)));
		recordHeaders.remove(DuctorMessageHeaders.IDEMPOTENCY_KEY);
		recordHeaders.remove(DuctorMessageHeaders.CONTENT_TYPE);
		recordHeaders.add(DuctorMessageHeaders.IDEMPOTENCY_KEY,
				context.idempotencyKey().getBytes(StandardCharsets.UTF_8));
		recordHeaders.add(DuctorMessageHeaders.CONTENT_TYPE,
				DuctorMessageHeaders.JSON.getBytes(StandardCharsets.UTF_8));
		ProducerRecord<String, byte[]> record = new ProducerRecord<>(topic, null, key,
				this.mapper.writeValueAsBytes(payload), recordHeaders);
		this.metrics.sent(topic);
		RecordMetadata metadata;
		try {
			SendResult<String, byte[]> result = this.template.send(record)
				.get(this.sendTimeout.toMillis(), TimeUnit.MILLISECONDS);
			metadata = result.getRecordMetadata();
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			this.metrics.failed(topic);
			throw new KafkaRelayException("Interrupted while waiting for the acknowledgement of message '"
					+ context.idempotencyKey() + "' to topic '" + topic + "'", ex);
		}
		catch (TimeoutException ex) {
			this.metrics.failed(topic);
			throw new KafkaRelayException("Message '" + context.idempotencyKey() + "' to topic '" + topic
					+ "' was not acknowledged by the broker within " + this.sendTimeout
					+ " (ductor.kafka.send-timeout); it is sent again", ex);
		}
		catch (ExecutionException ex) {
			this.metrics.failed(topic);
			Throwable cause = (ex.getCause() != null) ? ex.getCause() : ex;
			throw new KafkaRelayException("Message '" + context.idempotencyKey() + "' to topic '" + topic
					+ "' was not acknowledged by the broker: " + cause, cause);
		}
		this.metrics.acknowledged(topic, (context.attempt() == 1) ? context.scheduledAt() : null);
		AttemptReceipt.record(receipt(metadata));
		if (logger.isDebugEnabled()) {
			logger.debug("Message '" + context.idempotencyKey() + "' acknowledged at " + metadata.topic() + "-"
					+ metadata.partition() + "@" + metadata.offset());
		}
	}

	/**
	 * What the intent keeps of the broker's acknowledgement: topic, partition and offset
	 * (no offset when the producer was not told one).
	 */
	static String receipt(RecordMetadata metadata) {
		return "acknowledged by Kafka: topic '" + metadata.topic() + "', partition " + metadata.partition()
				+ (metadata.hasOffset() ? ", offset " + metadata.offset() : "");
	}

	/**
	 * @return the producer factory the relay sends with
	 */
	public ProducerFactory<String, byte[]> producerFactory() {
		return this.template.getProducerFactory();
	}

	@Override
	public void destroy() {
		this.template.destroy();
		if (this.template.getProducerFactory() instanceof DisposableBean disposable) {
			try {
				disposable.destroy();
			}
			catch (Exception ex) {
				logger.warn("Could not close the relay's Kafka producer", ex);
			}
		}
	}

	/**
	 * The relay's meters.
	 */
	public interface KafkaRelayMetrics {

		/** Metrics that record nothing. */
		KafkaRelayMetrics NONE = new KafkaRelayMetrics() {
		};

		/**
		 * @param topic the topic a record is being sent to
		 */
		default void sent(String topic) {
		}

		/**
		 * @param topic the topic a record was acknowledged on
		 * @param due when its first attempt was due (the commit), or {@code null} on a
		 * retry
		 */
		default void acknowledged(String topic, @Nullable OffsetDateTime due) {
		}

		/**
		 * @param topic the topic a record was not acknowledged on
		 */
		default void failed(String topic) {
		}

	}

}
