package io.ductor.kafka;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
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
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.kafka.annotation.KafkaListener;
import org.springframework.kafka.listener.DefaultErrorHandler;
import org.springframework.messaging.Message;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;
import org.springframework.util.backoff.FixedBackOff;

import io.ductor.messaging.DuctorMessageHeaders;
import io.ductor.messaging.IdempotentListener;
import io.ductor.messaging.MissingIdempotencyKeyException;
import io.ductor.messaging.MissingKeyPolicy;
import io.ductor.test.PostgresExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

class KafkaInboxTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	static KafkaBroker broker;

	static ConfigurableApplicationContext context;

	static KafkaProducer<String, String> producer;

	static JdbcClient jdbc;

	static Listeners listeners;

	@BeforeAll
	static void start() {
		broker = new KafkaBroker();
		jdbc = JdbcClient.create(postgres.dataSource());
		jdbc.sql("CREATE TABLE IF NOT EXISTS applied (message text NOT NULL, listener text NOT NULL)").update();
		context = KafkaTestApp.start(postgres.database(), broker, Listeners.class);
		listeners = context.getBean(Listeners.class);
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
		broker.close();
	}

	static void send(String topic, String value, String idempotencyKey) throws Exception {
		ProducerRecord<String, String> record = new ProducerRecord<>(topic, "k", value);
		if (idempotencyKey != null) {
			record.headers().add(DuctorMessageHeaders.IDEMPOTENCY_KEY, idempotencyKey.getBytes(StandardCharsets.UTF_8));
		}
		producer.send(record).get();
	}

	static long applied(String message) {
		return jdbc.sql("SELECT count(*) FROM applied WHERE message = ?").param(message).query(Long.class).single();
	}

	static long dedupRecords(String key) {
		return jdbc
			.sql("SELECT count(*) FROM eec_routing_idempotency WHERE idempotency_key = ? AND status = 'completed'")
			.param(key)
			.query(Long.class)
			.single();
	}

	/**
	 * Send a message after the others on the topic's key and wait until it is applied.
	 */
	static void awaitDrained(String topic) throws Exception {
		String marker = "marker-" + UUID.randomUUID();
		send(topic, marker, marker);
		await().atMost(Duration.ofSeconds(60)).until(() -> applied(marker) == 1);
	}

	@Test
	void aMessageDeliveredTwiceIsAppliedOnce() throws Exception {
		String message = "m-" + UUID.randomUUID();
		String key = UUID.randomUUID().toString();
		send("inbox", message, key);
		send("inbox", message, key);
		awaitDrained("inbox");
		assertThat(applied(message)).isOne();
		assertThat(listeners.runs(message)).isOne();
		assertThat(dedupRecords(key)).isOne();
	}

	@Test
	void aListenerThatFailsMidTransactionLeavesNothingAndItsRedeliveryAppliesTheMessageOnce() throws Exception {
		String message = "crash-" + UUID.randomUUID();
		String key = UUID.randomUUID().toString();
		send("inbox", message, key);
		await().atMost(Duration.ofSeconds(60)).until(() -> applied(message) == 1);
		assertThat(listeners.runs(message)).isEqualTo(2);
		send("inbox", message, key);
		awaitDrained("inbox");
		assertThat(applied(message)).isOne();
		assertThat(listeners.runs(message)).isEqualTo(2);
	}

	@Test
	void aMessageSentThroughDurableKafkaIsAppliedOnceByItsKey() throws Exception {
		String message = "durable-" + UUID.randomUUID();
		TransactionTemplate tx = new TransactionTemplate(context.getBean(PlatformTransactionManager.class));
		String key = tx.execute((status) -> context.getBean(DurableKafka.class).send("inbox", "k", message));
		await().atMost(Duration.ofSeconds(60)).until(() -> applied("\"" + message + "\"") == 1);
		assertThat(dedupRecords(key)).isOne();
	}

	@Test
	void aMessageWithoutTheHeaderIsRejectedWithoutRunningTheBody() throws Exception {
		String message = "bare-" + UUID.randomUUID();
		send("inbox", message, null);
		await().atMost(Duration.ofSeconds(60))
			.until(() -> listeners.rejected().stream().anyMatch((record) -> message.equals(record.value())));
		awaitDrained("inbox");
		assertThat(listeners.runs(message)).isZero();
		assertThat(applied(message)).isZero();
		assertThat(listeners.rejections()).hasAtLeastOneElementOfType(MissingIdempotencyKeyException.class);
	}

	@Test
	void withKeyFromPayloadAMessageWithoutTheHeaderIsDeduplicatedByItsPayload() throws Exception {
		String message = "order-" + UUID.randomUUID();
		send("inbox-payload", message, null);
		send("inbox-payload", message, null);
		awaitDrained("inbox-payload");
		assertThat(applied(message)).isOne();
		assertThat(dedupRecords("order:" + message)).isOne();
	}

	@Test
	void aListenerTakingASpringMessageReadsTheKeyFromItsHeaders() throws Exception {
		String message = "spring-" + UUID.randomUUID();
		String key = UUID.randomUUID().toString();
		send("inbox-message", message, key);
		send("inbox-message", message, key);
		awaitDrained("inbox-message");
		assertThat(applied(message)).isOne();
		assertThat(listeners.runs(message)).isOne();
	}

	@Configuration(proxyBeanMethods = false)
	static class Listeners {

		final Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();

		final Set<String> crashed = ConcurrentHashMap.newKeySet();

		final List<ConsumerRecord<?, ?>> rejected = new CopyOnWriteArrayList<>();

		final List<Throwable> rejections = new CopyOnWriteArrayList<>();

		private final JdbcClient jdbc;

		Listeners(DataSource dataSource) {
			this.jdbc = JdbcClient.create(dataSource);
		}

		@Bean
		DefaultErrorHandler errorHandler() {
			DefaultErrorHandler handler = new DefaultErrorHandler((record, ex) -> {
				this.rejected.add(record);
				Throwable cause = ex;
				while (cause != null) {
					this.rejections.add(cause);
					cause = cause.getCause();
				}
			}, new FixedBackOff(100, 5));
			handler.addNotRetryableExceptions(MissingIdempotencyKeyException.class);
			return handler;
		}

		List<ConsumerRecord<?, ?>> rejected() {
			return this.rejected;
		}

		List<Throwable> rejections() {
			return this.rejections;
		}

		int runs(String message) {
			AtomicInteger count = this.runs.get(message);
			return (count != null) ? count.get() : 0;
		}

		void apply(String message, String listener) {
			this.runs.computeIfAbsent(message, (m) -> new AtomicInteger()).incrementAndGet();
			this.jdbc.sql("INSERT INTO applied (message, listener) VALUES (?, ?)").params(message, listener).update();
			if (message.startsWith("crash-") && this.crashed.add(message)) {
				throw new IllegalStateException("crash after the listener's write, before the commit");
			}
		}

		@KafkaListener(topics = "inbox", groupId = "inbox")
		@IdempotentListener
		public void onRecord(ConsumerRecord<String, String> record) {
			apply(record.value(), "record");
		}

		@KafkaListener(topics = "inbox-payload", groupId = "inbox-payload")
		@IdempotentListener(missingKey = MissingKeyPolicy.KEY_FROM_PAYLOAD, key = "'order:' + #payload")
		public void onPayload(String payload) {
			apply(payload, "payload");
		}

		@KafkaListener(topics = "inbox-message", groupId = "inbox-message")
		@IdempotentListener
		public void onMessage(Message<String> message) {
			apply(message.getPayload(), "message");
		}

	}

}
