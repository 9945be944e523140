package io.ductor.sample.feed;

import java.nio.charset.StandardCharsets;

import javax.sql.DataSource;

import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.Header;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.kafka.annotation.KafkaListener;
import org.springframework.stereotype.Component;

import io.ductor.messaging.DuctorMessageHeaders;
import io.ductor.messaging.IdempotentListener;
import io.ductor.sample.order.OrderPlaced;

/**
 * Consumes the shop's own {@link OrderPlaced} events and adds one line per order to the
 * feed. The inbox ({@link IdempotentListener}) applies each event once: its
 * {@code ductor-idempotency-key} and the feed's row commit in one transaction, and a
 * redelivery (the relay sent it twice, the consumer restarted before committing its
 * offset) finds the key applied and adds nothing.
 */
@Component
public class OrderFeed {

	/** The consumer group of the feed's listener. */
	public static final String GROUP = "shop-feed";

	private final JdbcClient jdbc;

	private final JsonMapper json;

	OrderFeed(DataSource dataSource, JsonMapper json) {
		this.jdbc = JdbcClient.create(dataSource);
		this.json = json;
	}

	// tag::order-feed-listener[]
	@KafkaListener(topics = OrderPlaced.TOPIC, groupId = GROUP)
	@IdempotentListener
	public void onOrderPlaced(ConsumerRecord<String, String> record) {
		// runs once per event, in the transaction that records its ductor-idempotency-key
		OrderPlaced event = this.json.readValue(record.value(), OrderPlaced.class);
		this.jdbc.sql("""
				INSERT INTO sample_order_feed (order_id, message_key, summary, kafka_partition, kafka_offset)
				VALUES (?, ?, ?, ?, ?)""")
			.params(event.orderId(), key(record), summary(event), record.partition(), record.offset())
			.update();
	}
	// end::order-feed-listener[]

	private static String key(ConsumerRecord<String, String> record) {
		Header header = record.headers().lastHeader(DuctorMessageHeaders.IDEMPOTENCY_KEY);
		return (header != null) ? new String(header.value(), StandardCharsets.UTF_8) : "";
	}

	private static String summary(OrderPlaced event) {
		return event.customer() + " ordered " + event.quantity() + " x " + event.sku() + " for EUR "
				+ String.format("%d.%02d", event.amountCents() / 100, event.amountCents() % 100);
	}

	/**
	 * The event's topic, created at start-up by Spring Kafka's admin (three partitions:
	 * the events of one order, keyed by its id, stay on one).
	 */
	@Configuration(proxyBeanMethods = false)
	static class Topics {

		@Bean
		NewTopic orderPlacedTopic() {
			return new NewTopic(OrderPlaced.TOPIC, 3, (short) 1);
		}

	}

}
