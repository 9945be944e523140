package io.ductor.reliability.shipping;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.kafka.annotation.KafkaListener;
import org.springframework.stereotype.Component;

import io.ductor.messaging.DuctorMessageHeaders;
import io.ductor.messaging.IdempotentListener;

/**
 * Applies each shipment message once: one {@code applied} row, written in the inbox's
 * transaction (its {@code applied_order} is the order in which messages were applied).
 */
@Component
class Shipping {

	private static final JsonMapper mapper = JsonMapper.builder().build();

	private final JdbcClient jdbc;

	private final String generation;

	Shipping(JdbcClient jdbc, @Value("${shipping.generation}") String generation) {
		this.jdbc = jdbc;
		this.generation = generation;
	}

	@KafkaListener(topics = "shipments", groupId = "shipping")
	@IdempotentListener
	public void onShipment(ConsumerRecord<String, String> record) {
		JsonNode shipment = mapper.readTree(record.value());
		this.jdbc.sql("""
				INSERT INTO applied (idempotency_key, id, key, seq, record_key, kafka_partition, kafka_offset, consumer)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?)""")
			.params(DeliveryLog.header(record, DuctorMessageHeaders.IDEMPOTENCY_KEY), shipment.get("id").asString(),
					shipment.get("key").asString(), shipment.get("seq").asInt(), record.key(), record.partition(),
					record.offset(), this.generation)
			.update();
	}

}
