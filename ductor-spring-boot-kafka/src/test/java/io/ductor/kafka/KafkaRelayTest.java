package io.ductor.kafka;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import javax.sql.DataSource;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import io.ductor.effect.EffectIntent;
import io.ductor.effect.EffectOperations;
import io.ductor.effect.EffectStatus;
import io.ductor.kafka.internal.KafkaRelayHealthIndicator;
import io.ductor.messaging.DuctorMessageHeaders;
import io.ductor.test.PostgresExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

class KafkaRelayTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	static KafkaBroker broker;

	static ConfigurableApplicationContext context;

	static DurableKafka kafka;

	static EffectOperations operations;

	static TransactionTemplate tx;

	static JdbcClient jdbc;

	@BeforeAll
	static void start() {
		broker = new KafkaBroker();
		context = KafkaTestApp.start(postgres.database(), broker, Object.class);
		kafka = context.getBean(DurableKafka.class);
		operations = context.getBean(EffectOperations.class);
		tx = new TransactionTemplate(context.getBean(PlatformTransactionManager.class));
		jdbc = JdbcClient.create(context.getBean(DataSource.class));
		jdbc.sql("CREATE TABLE IF NOT EXISTS shop_order (id text PRIMARY KEY, seq integer)").update();
		jdbc.sql("CREATE TABLE IF NOT EXISTS key_counter (key text PRIMARY KEY, n integer NOT NULL)").update();
	}

	@AfterAll
	static void stop() {
		if (context != null) {
			context.close();
		}
		broker.close();
	}

	static EffectIntent awaitStatus(String key, EffectStatus status) {
		return await().atMost(Duration.ofSeconds(60))
			.until(() -> operations.findByKey(key).orElseThrow(), (intent) -> intent.status() == status);
	}

	record OrderPlaced(String orderId, int quantity) {
	}

	String placeOrder(String topic, String orderId) {
		return tx.execute((status) -> {
			jdbc.sql("INSERT INTO shop_order (id) VALUES (?)").param(orderId).update();
			return kafka.send(topic, orderId, new OrderPlaced(orderId, 2), Map.of("source", "shop"));
		});
	}

	@Test
	void aCommittedMessageIsDeliveredWithItsKeyHeadersAndContentTypeAndCompletesOnTheAcknowledgement() {
		String order = "order-" + UUID.randomUUID();
		String key = placeOrder("orders", order);
		EffectIntent intent = awaitStatus(key, EffectStatus.COMPLETED);
		assertThat(intent.effectName()).isEqualTo(DurableKafka.EFFECT_NAME);
		List<ConsumerRecord<String, String>> records = broker.readUntil("orders",
				(record) -> order.equals(record.key()), Duration.ofSeconds(30));
		ConsumerRecord<String, String> record = records.get(records.size() - 1);
		assertThat(record.value()).isEqualTo("{\"orderId\":\"" + order + "\",\"quantity\":2}");
		assertThat(KafkaBroker.header(record, DuctorMessageHeaders.IDEMPOTENCY_KEY)).isEqualTo(key);
		assertThat(KafkaBroker.header(record, DuctorMessageHeaders.CONTENT_TYPE)).isEqualTo("application/json");
		assertThat(KafkaBroker.header(record, "source")).isEqualTo("shop");
		MeterRegistry meters = context.getBean(MeterRegistry.class);
		assertThat(meters.get("ductor.messages.acknowledged")
			.tags("broker", "kafka", "destination", "orders")
			.counter()
			.count()).isGreaterThanOrEqualTo(1);
		assertThat(meters.get("ductor.messages.relay.lag").tags("destination", "orders").timer().count())
			.isGreaterThanOrEqualTo(1);
	}

	@Test
	void aMessageWithoutARecordKeyIsDeliveredWithoutOne() {
		String order = "order-" + UUID.randomUUID();
		String key = tx.execute((status) -> kafka.send("unkeyed", null, new OrderPlaced(order, 1)));
		EffectIntent intent = awaitStatus(key, EffectStatus.COMPLETED);
		assertThat(intent.orderingKey()).isNull();
		List<ConsumerRecord<String, String>> records = broker.readUntil("unkeyed",
				(record) -> key.equals(KafkaBroker.header(record, DuctorMessageHeaders.IDEMPOTENCY_KEY)),
				Duration.ofSeconds(30));
		assertThat(records.get(records.size() - 1).key()).isNull();
	}

	@Test
	void theHealthContributionSaysWhetherTheBrokerAnswersAndShowsTheRelaysBacklog() {
		KafkaRelayHealthIndicator health = context.getBean(KafkaRelayHealthIndicator.class);
		Health up = health.health(true);
		assertThat(up.getStatus()).isEqualTo(Status.UP);
		assertThat(up.getDetails()).containsKeys("pending", "inFlight", "failed", "clusterId");
		broker.disconnect();
		try {
			assertThat(health.health(true).getStatus()).isEqualTo(Status.DOWN);
		}
		finally {
			broker.reconnect();
		}
	}

	@Test
	void aRolledBackTransactionSendsNothing() {
		String order = "order-" + UUID.randomUUID();
		String[] rolledBack = new String[1];
		tx.executeWithoutResult((status) -> {
			jdbc.sql("INSERT INTO shop_order (id) VALUES (?)").param(order).update();
			rolledBack[0] = kafka.send("rollbacks", order, new OrderPlaced(order, 1));
			status.setRollbackOnly();
		});
		assertThat(operations.findByKey(rolledBack[0])).isEmpty();
		// a later message with the same record key goes to the same partition after
		// anything
		// recorded before it
		String marker = tx.execute((status) -> kafka.send("rollbacks", order, new OrderPlaced(order, 99)));
		List<ConsumerRecord<String, String>> records = broker.readUntil("rollbacks",
				(record) -> marker.equals(KafkaBroker.header(record, DuctorMessageHeaders.IDEMPOTENCY_KEY)),
				Duration.ofSeconds(30));
		assertThat(records).filteredOn((record) -> order.equals(record.key())).hasSize(1);
		assertThat(jdbc.sql("SELECT count(*) FROM shop_order WHERE id = ?").param(order).query(Long.class).single())
			.isZero();
	}

	@Test
	void aMessageWhoseAcknowledgementIsLostIsNotCompletedAndIsSentAgainWithTheSameKey() {
		String order = "order-" + UUID.randomUUID();
		// warm up: the relay's producer knows the topic's partitions
		awaitStatus(placeOrder("unacknowledged", "warm-" + order), EffectStatus.COMPLETED);
		broker.muteAnswers();
		String key;
		try {
			key = placeOrder("unacknowledged", order);
			EffectIntent waiting = await().atMost(Duration.ofSeconds(60))
				.until(() -> operations.findByKey(key).orElseThrow(), (intent) -> intent.attempts() >= 2);
			assertThat(waiting.status()).isIn(EffectStatus.PENDING, EffectStatus.IN_FLIGHT);
			assertThat(waiting.lastError()).contains("not acknowledged");
		}
		finally {
			broker.answer();
		}
		awaitStatus(key, EffectStatus.COMPLETED);
		List<ConsumerRecord<String, String>> records = broker.readUntil("unacknowledged",
				(record) -> order.equals(record.key()), Duration.ofSeconds(30));
		assertThat(records).filteredOn((record) -> order.equals(record.key()))
			.isNotEmpty()
			.allSatisfy((record) -> assertThat(KafkaBroker.header(record, DuctorMessageHeaders.IDEMPOTENCY_KEY))
				.isEqualTo(key));
	}

	@Test
	void messagesRecordedWhileTheBrokerIsDownAreRetriedAndDeliveredOnceItIsBack() {
		broker.stop();
		String order = "order-" + UUID.randomUUID();
		String key;
		try {
			key = placeOrder("outage", order);
			EffectIntent waiting = await().atMost(Duration.ofSeconds(60))
				.until(() -> operations.findByKey(key).orElseThrow(), (intent) -> intent.attempts() >= 2);
			assertThat(waiting.status()).isIn(EffectStatus.PENDING, EffectStatus.IN_FLIGHT);
		}
		finally {
			broker.start();
		}
		awaitStatus(key, EffectStatus.COMPLETED);
		List<ConsumerRecord<String, String>> records = broker.readUntil("outage",
				(record) -> order.equals(record.key()), Duration.ofSeconds(30));
		assertThat(KafkaBroker.header(records.get(records.size() - 1), DuctorMessageHeaders.IDEMPOTENCY_KEY))
			.isEqualTo(key);
	}

	@Test
	void messagesOfOneKeyFromConcurrentProducersReachOnePartitionInCommitOrder() throws Exception {
		String run = UUID.randomUUID().toString().substring(0, 8);
		List<String> keys = List.of("a-" + run, "b-" + run, "c-" + run);
		int threads = 4;
		int perThread = 15;
		ExecutorService pool = Executors.newFixedThreadPool(threads);
		List<Future<?>> futures = new ArrayList<>();
		for (int t = 0; t < threads; t++) {
			int thread = t;
			futures.add(pool.submit(() -> {
				for (int i = 0; i < perThread; i++) {
					String recordKey = keys.get((thread + i) % keys.size());
					tx.executeWithoutResult((status) -> {
						// the counter's row lock orders the transactions of one key:
						// their
						// sequence numbers are their commit order
						int seq = jdbc
							.sql("INSERT INTO key_counter (key, n) VALUES (?, 1) "
									+ "ON CONFLICT (key) DO UPDATE SET n = key_counter.n + 1 RETURNING n")
							.param(recordKey)
							.query(Integer.class)
							.single();
						jdbc.sql("INSERT INTO shop_order (id, seq) VALUES (?, ?)")
							.params(recordKey + "#" + seq, seq)
							.update();
						kafka.send("ordered", recordKey, Map.of("seq", seq));
					});
				}
			}));
		}
		for (Future<?> future : futures) {
			future.get();
		}
		pool.shutdown();
		int total = threads * perThread;
		Map<String, List<Integer>> seen = new ConcurrentHashMap<>();
		Map<String, Integer> partitions = new HashMap<>();
		Map<String, Boolean> keysSeen = new HashMap<>();
		List<ConsumerRecord<String, String>> records = broker.readUntil("ordered", (record) -> {
			if (keys.contains(record.key()) && keysSeen
				.putIfAbsent(KafkaBroker.header(record, DuctorMessageHeaders.IDEMPOTENCY_KEY), Boolean.TRUE) == null) {
				seen.computeIfAbsent(record.key(), (k) -> new ArrayList<>())
					.add(Integer.parseInt(record.value().replaceAll("\\D", "")));
			}
			return seen.values().stream().mapToInt(List::size).sum() == total;
		}, Duration.ofSeconds(90));
		for (ConsumerRecord<String, String> record : records) {
			if (keys.contains(record.key())) {
				assertThat(partitions.computeIfAbsent(record.key(), (k) -> record.partition()))
					.as("partition of key %s", record.key())
					.isEqualTo(record.partition());
			}
		}
		for (String recordKey : keys) {
			List<Integer> order = seen.get(recordKey);
			assertThat(order).as("sequence of key %s at the consumer", recordKey).isSorted();
			assertThat(order).doesNotHaveDuplicates();
			assertThat(order.get(order.size() - 1)).isEqualTo(order.size());
		}
	}

}
