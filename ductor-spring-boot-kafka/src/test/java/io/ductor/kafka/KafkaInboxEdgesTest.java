package io.ductor.kafka;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import javax.sql.DataSource;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.kafka.annotation.KafkaListener;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import io.ductor.messaging.DuctorMessageHeaders;
import io.ductor.messaging.IdempotentListener;
import io.ductor.messaging.MissingKeyPolicy;
import io.ductor.test.PostgresExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.awaitility.Awaitility.await;

/**
 * The inbox and the outbox at their edges: two copies of one message applied at the same
 * time, a key from a long payload, a topic Kafka refuses, and a header of the
 * application's own under Ductor's name.
 */
class KafkaInboxEdgesTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	static KafkaBroker broker;

	static ConfigurableApplicationContext context;

	static KafkaProducer<String, String> producer;

	static JdbcClient jdbc;

	static Edges edges;

	@BeforeAll
	static void start() {
		broker = new KafkaBroker();
		jdbc = JdbcClient.create(postgres.dataSource());
		jdbc.sql("CREATE TABLE IF NOT EXISTS edge_applied (message text NOT NULL)").update();
		context = KafkaTestApp.start(postgres.database(), broker, Edges.class);
		edges = context.getBean(Edges.class);
		producer = new KafkaProducer<>(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers(),
				ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class,
				ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class));
	}

	@AfterAll
	static void stop() {
		if (producer != null) {
			producer.close();
		}
		if (context != null) {
			context.close();
		}
		if (broker != null) {
			broker.close();
		}
	}

	static ProducerRecord<String, String> record(String topic, String value, String idempotencyKey) {
		ProducerRecord<String, String> record = new ProducerRecord<>(topic, "k", value);
		record.headers().add(DuctorMessageHeaders.IDEMPOTENCY_KEY, idempotencyKey.getBytes(StandardCharsets.UTF_8));
		return record;
	}

	static long applied(String message) {
		return jdbc.sql("SELECT count(*) FROM edge_applied WHERE message = ?")
			.param(message)
			.query(Long.class)
			.single();
	}

	@Test
	void twoCopiesOfOneMessageAppliedAtOnceRunTheBodyOnce() throws Exception {
		String message = "race-" + UUID.randomUUID();
		ConsumerRecord<String, String> copy = new ConsumerRecord<>("edge-race", 0, 0, "k", message);
		copy.headers().add(DuctorMessageHeaders.IDEMPOTENCY_KEY, UUID.randomUUID().toString().getBytes());
		CompletableFuture<Void> one = CompletableFuture.runAsync(() -> edges.onRace(copy));
		assertThat(edges.entered().await(30, TimeUnit.SECONDS)).isTrue();
		CompletableFuture<Void> other = CompletableFuture.runAsync(() -> edges.onRace(copy));
		// the other copy is either done (skipped or refused) or waiting on the first's
		// transaction
		await().atMost(Duration.ofSeconds(30))
			.until(() -> other.isDone()
					|| jdbc.sql("SELECT count(*) FROM pg_locks WHERE NOT granted").query(Long.class).single() > 0);
		edges.release().countDown();
		one.get(30, TimeUnit.SECONDS);
		try {
			other.get(30, TimeUnit.SECONDS);
		}
		catch (Exception refused) {
			// refused as in flight: the container retries it, and finds it applied
		}
		assertThat(edges.runs(message)).isOne();
		assertThat(applied(message)).isOne();
	}

	@Test
	void aHeaderOfTheApplicationsOwnUnderDuctorsKeyNameIsRefusedNotSilentlyReplaced() {
		TransactionTemplate tx = new TransactionTemplate(context.getBean(PlatformTransactionManager.class));
		DurableKafka kafka = context.getBean(DurableKafka.class);
		assertThatIllegalArgumentException()
			.isThrownBy(() -> tx.execute((status) -> kafka.send("edge-headers", "k", "payload",
					Map.of(DuctorMessageHeaders.IDEMPOTENCY_KEY, "the-applications-own"))))
			.withMessageContaining(DuctorMessageHeaders.IDEMPOTENCY_KEY);
	}

	@Test
	void aTopicKafkaCannotHaveIsRefusedAtTheCallNotCommittedAsAMessageNoAttemptCanSend() {
		TransactionTemplate tx = new TransactionTemplate(context.getBean(PlatformTransactionManager.class));
		DurableKafka kafka = context.getBean(DurableKafka.class);
		assertThatIllegalArgumentException()
			.isThrownBy(() -> tx.execute((status) -> kafka.send("orders placed!", "k", "payload")))
			.withMessageContaining("orders placed!");
	}

	@Test
	void aLongKeyFromThePayloadAppliesTheMessageOnce() throws Exception {
		String message = "long-" + "x".repeat(300) + UUID.randomUUID();
		producer.send(new ProducerRecord<>("edge-payload", "k", message));
		producer.send(new ProducerRecord<>("edge-payload", "k", message)).get();
		String marker = "marker-" + UUID.randomUUID();
		producer.send(new ProducerRecord<>("edge-payload", "k", marker)).get();
		await().atMost(Duration.ofSeconds(30)).until(() -> applied(marker) == 1);
		assertThat(applied(message)).isOne();
	}

	@Configuration(proxyBeanMethods = false)
	static class Edges {

		final Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();

		final CountDownLatch entered = new CountDownLatch(1);

		final CountDownLatch release = new CountDownLatch(1);

		private final JdbcClient jdbc;

		Edges(DataSource dataSource) {
			this.jdbc = JdbcClient.create(dataSource);
		}

		// read through methods: the bean is a proxy whose own fields are empty
		CountDownLatch entered() {
			return this.entered;
		}

		CountDownLatch release() {
			return this.release;
		}

		int runs(String message) {
			AtomicInteger count = this.runs.get(message);
			return (count != null) ? count.get() : 0;
		}

		void apply(String message) {
			this.runs.computeIfAbsent(message, (m) -> new AtomicInteger()).incrementAndGet();
			this.jdbc.sql("INSERT INTO edge_applied (message) VALUES (?)").param(message).update();
		}

		@KafkaListener(topics = "edge-payload", groupId = "edge-payload")
		@IdempotentListener(missingKey = MissingKeyPolicy.KEY_FROM_PAYLOAD, key = "'edge:' + #payload")
		public void onPayload(String payload) {
			apply(payload);
		}

		@IdempotentListener
		public void onRace(ConsumerRecord<String, String> record) {
			apply(record.value());
			this.entered.countDown();
			try {
				this.release.await(30, TimeUnit.SECONDS);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		}

	}

}
