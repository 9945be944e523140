package io.ductor.reliability.depot;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageProperties;
import org.springframework.amqp.rabbit.annotation.RabbitListener;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Component;

import io.ductor.messaging.DuctorMessageHeaders;
import io.ductor.messaging.IdempotentListener;

/**
 * Applies each parcel message once: one {@code parcel_applied} row, written in the
 * inbox's transaction (its {@code applied_order} is the order in which messages were
 * applied).
 */
@Component
class Depot {

	private static final JsonMapper mapper = JsonMapper.builder().build();

	private final JdbcClient jdbc;

	private final String generation;

	Depot(JdbcClient jdbc, @Value("${depot.generation}") String generation) {
		this.jdbc = jdbc;
		this.generation = generation;
	}

	@RabbitListener(queues = "${depot.queue}")
	@IdempotentListener
	public void onParcel(Message message) {
		MessageProperties properties = message.getMessageProperties();
		Object idempotencyKey = properties.getHeader(DuctorMessageHeaders.IDEMPOTENCY_KEY);
		JsonNode parcel = mapper.readTree(message.getBody());
		this.jdbc.sql("""
				INSERT INTO parcel_applied (idempotency_key, id, key, seq, routing_key, redelivered, consumer)
				VALUES (?, ?, ?, ?, ?, ?, ?)""")
			.params(String.valueOf(idempotencyKey), parcel.get("id").asString(), parcel.get("key").asString(),
					parcel.get("seq").asInt(), properties.getReceivedRoutingKey(), properties.isRedelivered(),
					this.generation)
			.update();
	}

}
