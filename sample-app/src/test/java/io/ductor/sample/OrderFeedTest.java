package io.ductor.sample;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

import org.springframework.kafka.core.KafkaAdmin;

import io.ductor.kafka.DurableKafka;
import io.ductor.messaging.DuctorMessageHeaders;
import io.ductor.sample.feed.OrderFeed;
import io.ductor.sample.order.OrderFlow;
import io.ductor.sample.order.OrderPlaced;
import io.ductor.sample.order.PlaceOrderRequest;
import io.ductor.test.browser.Browser;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The shop publishes {@link OrderPlaced} through Ductor's Kafka relay in the order's
 * transaction and its own listener applies it once: the order's event reaches the feed
 * once, and the same record delivered again (same {@code ductor-idempotency-key}) is
 * consumed and applied no second time.
 */
class OrderFeedTest extends ShopTestSupport {

	private static final Duration PATIENCE = Duration.ofSeconds(30);

	static Admin admin;

	@BeforeAll
	static void connect() {
		admin = Admin.create(clientConfig());
	}

	@AfterAll
	static void disconnect() {
		if (admin != null) {
			admin.close();
		}
	}

	@Test
	void anOrdersEventReachesTheFeedOnceAndARedeliveryIsAppliedOnce() throws Exception {
		String id = bean(OrderFlow.class).place("feed-1", new PlaceOrderRequest("dora", "mug-1", 3));
		String messageKey = jdbc().sql("""
				SELECT idempotency_key FROM eec_effect_intent WHERE effect_name = ? AND payload::text LIKE ?""")
			.params(DurableKafka.EFFECT_NAME, "%" + id + "%")
			.query(String.class)
			.single();

		await().atMost(PATIENCE).until(() -> feedRows(id) == 1);
		awaitConsumedToTheEnd();
		assertThat(feedRows(id)).as("the order's event applied once").isOne();
		assertThat(jdbc().sql("SELECT message_key FROM sample_order_feed WHERE order_id = ?")
			.param(id)
			.query(String.class)
			.single()).isEqualTo(messageKey);
		JsonNode line = ShopClient.json(new ShopClient(port()).get("/feed")).get(0);
		assertThat(line.get("orderId").asString()).isEqualTo(id);
		assertThat(line.get("summary").asString()).isEqualTo("dora ordered 3 x mug-1 for EUR 36.00");

		ConsumerRecord<String, String> sent = read(id);
		assertThat(sent.key()).isEqualTo(id);
		RecordMetadata again = resend(sent);
		assertThat(again.partition()).as("the same key, the same partition").isEqualTo(sent.partition());
		assertThat(again.offset()).isGreaterThan(sent.offset());
		awaitConsumedToTheEnd();
		assertThat(feedRows(id)).as("the redelivered event, with the same ductor-idempotency-key").isOne();
	}

	@Test
	void theEndpointKeepsTheBrokersAcknowledgementOfTheRelayedEvent() {
		String id = bean(OrderFlow.class).place("feed-2", new PlaceOrderRequest("erin", "book-1", 1));
		await().atMost(PATIENCE).until(() -> feedRows(id) == 1);
		long intentId = relayIntent(id);
		JsonNode details = ShopClient.json(new ShopClient(port()).get("/actuator/ductor/intents/" + intentId))
			.get("details");
		assertThat(details.get("receipt").asString())
			.as("the partition and offset the broker acknowledged, where the listener read the event")
			.isEqualTo(acknowledgement(id));
	}

	@Test
	void theConsoleShowsTheRelayedEventsDestinationAndTheBrokersAcknowledgement() {
		String id = bean(OrderFlow.class).place("feed-3", new PlaceOrderRequest("fred", "book-2", 2));
		await().atMost(PATIENCE).until(() -> feedRows(id) == 1);
		long intentId = relayIntent(id);
		try (Browser browser = Browser.launch(1280, 900)) {
			browser.open("http://localhost:" + port() + "/ductor/#/intent/" + intentId);
			browser.find("#intent-page[data-status=completed]");
			assertThat(browser.text("dd[data-field=destination]"))
				.isEqualTo("Kafka topic \"" + OrderPlaced.TOPIC + "\", key \"" + id + "\"");
			assertThat(browser.text("dd[data-field=receipt]")).isEqualTo(acknowledgement(id));
			browser.screenshot(Path.of("target", "screenshots", "console-relayed-intent.png"));
		}
	}

	private static long relayIntent(String orderId) {
		return jdbc().sql("SELECT id FROM eec_effect_intent WHERE effect_name = ? AND payload::text LIKE ?")
			.params(DurableKafka.EFFECT_NAME, "%" + orderId + "%")
			.query(Long.class)
			.single();
	}

	/**
	 * The receipt the relay should have kept: where the feed's listener read the event.
	 */
	private static String acknowledgement(String orderId) {
		return jdbc().sql("SELECT kafka_partition, kafka_offset FROM sample_order_feed WHERE order_id = ?")
			.param(orderId)
			.query((rs, row) -> "acknowledged by Kafka: topic '" + OrderPlaced.TOPIC + "', partition "
					+ rs.getInt("kafka_partition") + ", offset " + rs.getLong("kafka_offset"))
			.single();
	}

	private static long feedRows(String orderId) {
		return jdbc().sql("SELECT count(*) FROM sample_order_feed WHERE order_id = ?")
			.param(orderId)
			.query(Long.class)
			.single();
	}

	/** Wait until the feed's consumer group committed every record of the topic. */
	private static void awaitConsumedToTheEnd() throws Exception {
		List<TopicPartition> partitions = new ArrayList<>();
		for (var partition : admin.describeTopics(List.of(OrderPlaced.TOPIC))
			.allTopicNames()
			.get()
			.get(OrderPlaced.TOPIC)
			.partitions()) {
			partitions.add(new TopicPartition(OrderPlaced.TOPIC, partition.partition()));
		}
		Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
		partitions.forEach((partition) -> latest.put(partition, OffsetSpec.latest()));
		Map<TopicPartition, Long> ends = new HashMap<>();
		admin.listOffsets(latest).all().get().forEach((partition, info) -> ends.put(partition, info.offset()));
		await().atMost(PATIENCE).until(() -> {
			Map<TopicPartition, OffsetAndMetadata> committed = admin.listConsumerGroupOffsets(OrderFeed.GROUP)
				.partitionsToOffsetAndMetadata()
				.get();
			return ends.entrySet()
				.stream()
				.allMatch((end) -> end.getValue() == 0 || committed.get(end.getKey()) != null
						&& committed.get(end.getKey()).offset() >= end.getValue());
		});
	}

	private static ConsumerRecord<String, String> read(String orderId) {
		Map<String, Object> config = clientConfig();
		config.put(ConsumerConfig.GROUP_ID_CONFIG, "test-" + UUID.randomUUID());
		config.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
		try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(config, new StringDeserializer(),
				new StringDeserializer())) {
			consumer.subscribe(List.of(OrderPlaced.TOPIC));
			long deadline = System.nanoTime() + PATIENCE.toNanos();
			while (System.nanoTime() < deadline) {
				for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(200))) {
					if (orderId.equals(record.key())) {
						return record;
					}
				}
			}
		}
		throw new AssertionError("No record keyed " + orderId + " on " + OrderPlaced.TOPIC);
	}

	/** Send {@code record} again as it is: key, value and headers. */
	private static RecordMetadata resend(ConsumerRecord<String, String> record) throws Exception {
		try (KafkaProducer<String, String> producer = new KafkaProducer<>(clientConfig(), new StringSerializer(),
				new StringSerializer())) {
			ProducerRecord<String, String> copy = new ProducerRecord<>(record.topic(), record.key(), record.value());
			for (Header header : record.headers()) {
				copy.headers().add(header);
			}
			assertThat(copy.headers().lastHeader(DuctorMessageHeaders.IDEMPOTENCY_KEY)).isNotNull();
			return producer.send(copy).get();
		}
	}

	private static Map<String, Object> clientConfig() {
		Map<String, Object> config = new HashMap<>();
		config.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
				bean(KafkaAdmin.class).getConfigurationProperties().get(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG));
		return config;
	}

}
