package io.ductor.modulithrelay;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Predicate;
import java.util.stream.IntStream;

import javax.sql.DataSource;

import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import tools.jackson.core.type.TypeReference;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.kafka.test.EmbeddedKafkaKraftBroker;
import org.springframework.modulith.events.support.DelegatingEventExternalizer;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import io.ductor.kafka.DurableKafka;
import io.ductor.messaging.DuctorMessageHeaders;
import io.ductor.modulith.ModulithPublications;
import io.ductor.modulithrelay.ExternalizingApp.InvoiceIssued;
import io.ductor.modulithrelay.ExternalizingApp.OrderCompleted;
import io.ductor.test.PostgresExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Modulith's externalized events through Ductor's Kafka relay, on PostgreSQL and a Kafka
 * broker in the test JVM: recorded in the publishing transaction, sent after its commit
 * with the routing key as record key and the intent's key as header, in commit order per
 * key; nothing for a rolled-back transaction. Modulith's own Kafka externalizer
 * ({@code spring-modulith-events-kafka} is on the class path) stands down.
 */
class ExternalizedThroughKafkaTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	static EmbeddedKafkaKraftBroker broker;

	static ConfigurableApplicationContext context;

	static TransactionTemplate tx;

	static JdbcClient jdbc;

	@BeforeAll
	static void start() {
		broker = new EmbeddedKafkaKraftBroker(1, 3);
		broker.brokerListProperty("ductor.test.kafka.brokers");
		broker.brokerProperty("auto.create.topics.enable", "true");
		broker.brokerProperty("offsets.topic.replication.factor", "1");
		broker.brokerProperty("group.initial.rebalance.delay.ms", "0");
		broker.afterPropertiesSet();
		broker.addTopics(new NewTopic("orders.completed", 3, (short) 1), new NewTopic("invoices", 3, (short) 1));
		List<String> properties = new ArrayList<>(List.of(postgres.database().springProperties()));
		properties.addAll(List.of("spring.main.banner-mode=off", "logging.level.org.apache.kafka=warn",
				"spring.kafka.bootstrap-servers=" + broker.getBrokersAsString(),
				"ductor.effects.drainer.poll-interval=100ms", "ductor.effects.backoff.initial=100ms",
				"ductor.effects.backoff.max=1s", "ductor.kafka.send-timeout=5s", "ductor.amqp.enabled=false"));
		context = new SpringApplicationBuilder(ExternalizingApp.class).web(WebApplicationType.NONE)
			.properties(properties.toArray(String[]::new))
			.run();
		tx = new TransactionTemplate(context.getBean(PlatformTransactionManager.class));
		jdbc = JdbcClient.create(context.getBean(DataSource.class));
		jdbc.sql("CREATE TABLE IF NOT EXISTS completed_order (id text PRIMARY KEY)").update();
	}

	@AfterAll
	static void stop() {
		if (context != null) {
			context.close();
		}
		broker.destroy();
	}

	@Test
	void aCommittedEventIsRecordedInItsTransactionAndDeliveredWithItsRoutingKeyAndIdempotencyKey() {
		String order = "order-" + UUID.randomUUID();
		long recordedInside = tx.execute((status) -> {
			jdbc.sql("INSERT INTO completed_order (id) VALUES (?)").param(order).update();
			context.publishEvent(new OrderCompleted(order, 1));
			return messages(order).size();
		});
		assertThat(recordedInside).as("the relay message is written by the publishing transaction").isEqualTo(1);
		ConsumerRecord<String, String> record = last(readUntil("orders.completed", (r) -> order.equals(r.key())));
		assertThat(json(record)).isEqualTo(Map.of("orderId", order, "seq", 1));
		String key = messages(order).get(0);
		assertThat(header(record, DuctorMessageHeaders.IDEMPOTENCY_KEY)).isEqualTo(key);
		await().atMost(Duration.ofSeconds(30))
			.until(() -> jdbc.sql("SELECT status FROM eec_effect_intent WHERE idempotency_key = ?")
				.param(key)
				.query(String.class)
				.single(), "completed"::equals);
		// Modulith's own Kafka externalizer got no publication, so nothing is sent twice
		assertThat(context.getBeansOfType(DelegatingEventExternalizer.class)).isNotEmpty();
		assertThat(jdbc.sql("SELECT count(*) FROM eec_effect_intent WHERE effect_name = ?")
			.param(ModulithPublications.EFFECT_NAME)
			.query(Long.class)
			.single()).isZero();
	}

	@Test
	void aRolledBackTransactionRecordsAndSendsNothing() {
		String order = "order-" + UUID.randomUUID();
		tx.executeWithoutResult((status) -> {
			jdbc.sql("INSERT INTO completed_order (id) VALUES (?)").param(order).update();
			context.publishEvent(new OrderCompleted(order, 1));
			status.setRollbackOnly();
		});
		assertThat(messages(order)).isEmpty();
		// a later event of the same order reaches the same partition after anything
		// recorded before it
		tx.executeWithoutResult((status) -> context.publishEvent(new OrderCompleted(order, 2)));
		List<ConsumerRecord<String, String>> records = readUntil("orders.completed",
				(r) -> order.equals(r.key()) && json(r).get("seq").equals(2));
		assertThat(records).filteredOn((r) -> order.equals(r.key())).hasSize(1);
	}

	@Test
	void eventsOfOneRoutingKeyArriveInCommitOrderOnOnePartition() {
		String first = "order-" + UUID.randomUUID();
		String second = "order-" + UUID.randomUUID();
		int count = 15;
		for (int seq = 1; seq <= count; seq++) {
			int n = seq;
			tx.executeWithoutResult((status) -> {
				context.publishEvent(new OrderCompleted(first, n));
				context.publishEvent(new OrderCompleted(second, n));
			});
		}
		List<ConsumerRecord<String, String>> records = readUntil("orders.completed", new Predicate<>() {

			int seen;

			@Override
			public boolean test(ConsumerRecord<String, String> r) {
				return (first.equals(r.key()) || second.equals(r.key())) && ++this.seen == 2 * count;
			}

		});
		for (String order : List.of(first, second)) {
			List<ConsumerRecord<String, String>> ofOrder = records.stream()
				.filter((r) -> order.equals(r.key()))
				.toList();
			assertThat(ofOrder).extracting((r) -> json(r).get("seq"))
				.containsExactlyElementsOf(IntStream.rangeClosed(1, count).boxed().toList());
			assertThat(ofOrder).extracting(ConsumerRecord::partition).containsOnly(ofOrder.get(0).partition());
		}
	}

	@Test
	void theExternalizationConfigurationSelectsMapsRoutesAndAddsHeaders() {
		String customer = "customer-" + UUID.randomUUID();
		String internal = "internal-" + UUID.randomUUID();
		tx.executeWithoutResult((status) -> {
			context.publishEvent(new OrderCompleted(internal, 1));
			context.publishEvent(new InvoiceIssued("inv-1", customer, 4200));
		});
		assertThat(messages(internal)).as("filtered out by the configuration").isEmpty();
		ConsumerRecord<String, String> record = last(readUntil("invoices", (r) -> customer.equals(r.key())));
		assertThat(json(record)).isEqualTo(Map.of("invoice", "inv-1", "amount", 4200));
		assertThat(header(record, "invoice-schema")).isEqualTo("v1");
		assertThat(header(record, DuctorMessageHeaders.IDEMPOTENCY_KEY)).isNotBlank();
	}

	@Test
	void anEventPublishedWithoutATransactionIsNotExternalized() {
		String order = "order-" + UUID.randomUUID();
		context.publishEvent(new OrderCompleted(order, 1));
		assertThat(messages(order)).isEmpty();
	}

	/** The idempotency keys of the relay messages recorded for a record key. */
	static List<String> messages(String recordKey) {
		return jdbc.sql("SELECT idempotency_key FROM eec_effect_intent WHERE effect_name = ? AND payload->>1 = ?")
			.params(DurableKafka.EFFECT_NAME, recordKey)
			.query(String.class)
			.list();
	}

	static List<ConsumerRecord<String, String>> readUntil(String topic,
			Predicate<ConsumerRecord<String, String>> last) {
		List<ConsumerRecord<String, String>> records = new ArrayList<>();
		long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
		try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(Map.of(
				ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.getBrokersAsString(), ConsumerConfig.GROUP_ID_CONFIG,
				"test-" + UUID.randomUUID(), ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest",
				ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class,
				ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class))) {
			consumer.subscribe(List.of(topic));
			while (System.nanoTime() < deadline) {
				for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(200))) {
					records.add(record);
					if (last.test(record)) {
						return records;
					}
				}
			}
		}
		throw new AssertionError("No matching record on " + topic + "; read " + records);
	}

	static Map<String, Object> json(ConsumerRecord<String, String> record) {
		return JsonMapper.shared().readValue(record.value(), new TypeReference<Map<String, Object>>() {
		});
	}

	static ConsumerRecord<String, String> last(List<ConsumerRecord<String, String>> records) {
		return records.get(records.size() - 1);
	}

	static String header(ConsumerRecord<?, ?> record, String name) {
		Header header = record.headers().lastHeader(name);
		return (header != null) ? new String(header.value(), StandardCharsets.UTF_8) : null;
	}

}
