package io.ductor.kafka;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import javax.sql.DataSource;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.kafka.annotation.KafkaListener;

import io.ductor.messaging.DuctorMessageHeaders;
import io.ductor.messaging.IdempotentListener;
import io.ductor.test.PostgresExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * {@code @IdempotentListener} on a batch listener: the records Ductor sent, each with its
 * key, are either applied once each, or the application does not start, saying why. They
 * are never rejected as "not sent through Ductor" and discarded by the container.
 */
class KafkaBatchInboxTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	@Test
	void aBatchListenerAppliesEachRecordOnceOrFailsStartUpNamingTheBatch() throws Exception {
		JdbcClient jdbc = JdbcClient.create(postgres.dataSource());
		jdbc.sql("CREATE TABLE IF NOT EXISTS batch_applied (message text NOT NULL)").update();
		try (KafkaBroker broker = new KafkaBroker()) {
			ConfigurableApplicationContext context;
			try {
				context = KafkaTestApp.start(postgres.database(), broker, BatchListener.class);
			}
			catch (RuntimeException refused) {
				assertThat(refused).hasStackTraceContaining("batch").hasStackTraceContaining("BatchListener.onBatch");
				return;
			}
			try (context;
					KafkaProducer<String, String> producer = new KafkaProducer<>(
							Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers(),
									ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class,
									ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class))) {
				String first = "batch-" + UUID.randomUUID();
				String second = "batch-" + UUID.randomUUID();
				String firstKey = UUID.randomUUID().toString();
				producer.send(record(first, firstKey));
				producer.send(record(second, UUID.randomUUID().toString()));
				// the first one again, as the relay sends it when an acknowledgement was
				// lost
				producer.send(record(first, firstKey)).get();
				await().atMost(Duration.ofSeconds(30))
					.until(() -> applied(jdbc, first) >= 1 && applied(jdbc, second) >= 1);
				assertThat(applied(jdbc, first)).isOne();
				assertThat(applied(jdbc, second)).isOne();
			}
		}
	}

	private static ProducerRecord<String, String> record(String value, String idempotencyKey) {
		ProducerRecord<String, String> record = new ProducerRecord<>("batch-inbox", "k", value);
		record.headers().add(DuctorMessageHeaders.IDEMPOTENCY_KEY, idempotencyKey.getBytes(StandardCharsets.UTF_8));
		return record;
	}

	private static long applied(JdbcClient jdbc, String message) {
		return jdbc.sql("SELECT count(*) FROM batch_applied WHERE message = ?")
			.param(message)
			.query(Long.class)
			.single();
	}

	@Configuration(proxyBeanMethods = false)
	static class BatchListener {

		private final JdbcClient jdbc;

		BatchListener(DataSource dataSource) {
			this.jdbc = JdbcClient.create(dataSource);
		}

		@KafkaListener(topics = "batch-inbox", groupId = "batch-inbox", batch = "true")
		@IdempotentListener
		public void onBatch(List<ConsumerRecord<String, String>> records) {
			records.forEach((record) -> this.jdbc.sql("INSERT INTO batch_applied (message) VALUES (?)")
				.param(record.value())
				.update());
		}

	}

}
