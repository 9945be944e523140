package io.ductor.sample.modulith;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import javax.sql.DataSource;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.boot.SpringApplication;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.kafka.test.EmbeddedKafkaKraftBroker;
import org.springframework.modulith.core.ApplicationModules;

import io.ductor.kafka.DurableKafka;
import io.ductor.messaging.DuctorMessageHeaders;
import io.ductor.modulith.ModulithPublications;
import io.ductor.sample.modulith.inventory.Inventory;
import io.ductor.sample.modulith.order.Orders;
import io.ductor.test.PostgresExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The whole sample on PostgreSQL, with a Kafka broker in the test JVM: a completed order
 * takes its stock out once, through a publication Ductor recorded with the order, and its
 * externalized event reaches Kafka keyed by the order.
 */
class ModulithSampleTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	static EmbeddedKafkaKraftBroker broker;

	static ConfigurableApplicationContext context;

	@BeforeAll
	static void start() {
		broker = new EmbeddedKafkaKraftBroker(1, 1);
		broker.brokerListProperty("ductor.test.kafka.brokers");
		broker.brokerProperty("auto.create.topics.enable", "true");
		broker.brokerProperty("offsets.topic.replication.factor", "1");
		broker.brokerProperty("group.initial.rebalance.delay.ms", "0");
		broker.afterPropertiesSet();
		List<String> args = new ArrayList<>();
		for (String property : postgres.database().springProperties()) {
			args.add("--" + property);
		}
		args.addAll(List.of("--server.port=0", "--ductor.kafka.enabled=true",
				"--spring.kafka.bootstrap-servers=" + broker.getBrokersAsString(),
				"--ductor.effects.drainer.poll-interval=100ms", "--logging.level.org.apache.kafka=warn"));
		context = SpringApplication.run(ModulithSampleApplication.class, args.toArray(String[]::new));
	}

	@AfterAll
	static void stop() {
		if (context != null) {
			context.close();
		}
		if (broker != null) {
			broker.destroy();
		}
	}

	@Test
	void theModulesRespectTheirBoundaries() {
		ApplicationModules modules = ApplicationModules.of(ModulithSampleApplication.class);
		modules.verify();
		assertThat(modules.stream().map((module) -> module.getIdentifier().toString()))
			.containsExactlyInAnyOrder("order", "inventory");
	}

	@Test
	void aCompletedOrderTakesItsStockOutOnceAndReachesKafkaKeyedByTheOrder() {
		String sku = "sku-" + UUID.randomUUID();
		String orderId = context.getBean(Orders.class).complete(sku, 2);
		Inventory inventory = context.getBean(Inventory.class);
		await().atMost(Duration.ofSeconds(30)).until(() -> inventory.movements(sku), (rows) -> !rows.isEmpty());
		JdbcClient jdbc = JdbcClient.create(context.getBean(DataSource.class));
		await().atMost(Duration.ofSeconds(30))
			.until(() -> jdbc.sql("""
					SELECT effect_name || ':' || status FROM eec_effect_intent
					WHERE payload::text LIKE '%' || ? || '%' ORDER BY effect_name""")
				.param(orderId)
				.query(String.class)
				.list(),
					(rows) -> rows.equals(List.of(DurableKafka.EFFECT_NAME + ":completed",
							ModulithPublications.EFFECT_NAME + ":completed")));
		assertThat(inventory.movements(sku)).containsExactly(Map.of("order_id", orderId, "quantity", -2));
		String messageKey = jdbc
			.sql("SELECT idempotency_key FROM eec_effect_intent WHERE effect_name = ? AND payload->>1 = ?")
			.params(DurableKafka.EFFECT_NAME, orderId)
			.query(String.class)
			.single();
		ConsumerRecord<String, String> record = read("orders.completed", orderId);
		Header header = record.headers().lastHeader(DuctorMessageHeaders.IDEMPOTENCY_KEY);
		assertThat(new String(header.value(), StandardCharsets.UTF_8)).isEqualTo(messageKey);
	}

	static ConsumerRecord<String, String> read(String topic, String key) {
		long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
		try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(Map.of(
				ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.getBrokersAsString(), ConsumerConfig.GROUP_ID_CONFIG,
				"test-" + UUID.randomUUID(), ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest",
				ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class,
				ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class))) {
			consumer.subscribe(List.of(topic));
			while (System.nanoTime() < deadline) {
				for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(200))) {
					if (key.equals(record.key())) {
						return record;
					}
				}
			}
		}
		throw new AssertionError("No record with key " + key + " on " + topic);
	}

}
