package io.ductor.amqp;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.amqp.core.Message;

import io.ductor.messaging.DuctorMessageHeaders;
import io.ductor.test.PostgresExtension;
import io.ductor.test.RabbitBroker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Messages published through {@link DurableRabbit} against the real RabbitMQ server: sent
 * only when the transaction commits, with the key as header and message id, completed
 * only when confirmed, and failed (not completed) when the broker returns them.
 */
class DurableRabbitTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	private static final String CONNECTION = "ductor-relay-" + UUID.randomUUID();

	private static RabbitApp app;

	@BeforeAll
	static void start() {
		RabbitBroker.assumeAvailable();
		app = RabbitApp.start(postgres, RabbitApp.Application.class, "ductor.effects.max-attempts=3",
				"ductor.amqp.connection-name=" + CONNECTION);
	}

	@AfterAll
	static void stop() {
		if (app != null) {
			app.close();
		}
	}

	@Test
	void aCommittedMessageIsDeliveredWithItsKeyAsHeaderAndMessageIdAndCompletesWhenConfirmed() {
		String exchange = app.exchange();
		String queue = app.queue(exchange, "orders");
		DurableRabbit rabbit = app.getBean(DurableRabbit.class);
		String key = app.transactions.execute((status) -> rabbit.send(exchange, "orders",
				Map.of("orderId", 42, "total", "9.90"), Map.of("tenant", "acme")));
		Message message = app.rabbit.receive(queue, 10_000);
		assertThat(message).isNotNull();
		assertThat(new String(message.getBody(), StandardCharsets.UTF_8)).contains("\"orderId\":42")
			.contains("\"total\":\"9.90\"");
		assertThat(message.getMessageProperties().getMessageId()).isEqualTo(key);
		assertThat((String) message.getMessageProperties().getHeader(DuctorMessageHeaders.IDEMPOTENCY_KEY))
			.isEqualTo(key);
		assertThat((String) message.getMessageProperties().getHeader("tenant")).isEqualTo("acme");
		assertThat(message.getMessageProperties().getContentType()).isEqualTo("application/json");
		await().atMost(Duration.ofSeconds(10)).until(() -> "completed".equals(app.status(key)));
		assertThat(app.receipt(key)).as("what the intent keeps of the broker's confirm")
			.isEqualTo("confirmed by RabbitMQ: exchange '" + exchange + "' with routing key 'orders'");
		MeterRegistry meters = app.getBean(MeterRegistry.class);
		assertThat(meters.get("ductor.messages.acknowledged")
			.tags("broker", "rabbitmq", "destination", exchange)
			.counter()
			.count()).isEqualTo(1.0);
		assertThat(meters.get("ductor.messages.relay.lag").tags("destination", exchange).timer().count()).isEqualTo(1);
	}

	@Test
	void aRolledBackTransactionPublishesNothing() {
		String exchange = app.exchange();
		String queue = app.queue(exchange, "orders");
		DurableRabbit rabbit = app.getBean(DurableRabbit.class);
		String[] rolledBack = new String[1];
		app.transactions.executeWithoutResult((status) -> {
			rolledBack[0] = rabbit.send(exchange, "orders", "rolled back");
			status.setRollbackOnly();
		});
		// one exchange and routing key are published in commit order: had the rolled-back
		// message been sent, it would come first
		String marker = app.transactions.execute((status) -> rabbit.send(exchange, "orders", "committed"));
		Message first = app.rabbit.receive(queue, 10_000);
		assertThat(first).isNotNull();
		assertThat(first.getMessageProperties().getMessageId()).isEqualTo(marker);
		assertThat(app.status(rolledBack[0])).isNull();
		await().atMost(Duration.ofSeconds(10)).until(() -> "completed".equals(app.status(marker)));
		assertThat(app.rabbit.receive(queue, 200)).isNull();
	}

	@Test
	void aMessageNoQueueIsBoundForIsRetriedThenFailedNamingTheDestinationNeverCompleted() {
		String exchange = app.exchange();
		DurableRabbit rabbit = app.getBean(DurableRabbit.class);
		String key = app.transactions.execute((status) -> rabbit.send(exchange, "nobody-listens", "lost?"));
		await().atMost(Duration.ofSeconds(20)).until(() -> "failed".equals(app.status(key)));
		Map<String, Object> intent = app.jdbc
			.sql("SELECT attempts, last_error FROM eec_effect_intent WHERE idempotency_key = ?")
			.param(key)
			.query()
			.singleRow();
		assertThat(intent.get("attempts")).isEqualTo(3);
		assertThat(app.receipt(key)).as("a returned message has no receipt").isNull();
		assertThat((String) intent.get("last_error")).contains("returned the message as unroutable")
			.contains("exchange '" + exchange + "'")
			.contains("routing key 'nobody-listens'");
		MeterRegistry meters = app.getBean(MeterRegistry.class);
		assertThat(meters.get("ductor.messages.returned").tags("destination", exchange).counter().count())
			.isEqualTo(3.0);
		assertThat(meters.find("ductor.messages.acknowledged").tags("destination", exchange).counter()).isNull();
	}

	@Test
	void messagesOfOneRoutingKeyArriveInCommitOrderFromConcurrentProducers() throws Exception {
		String exchange = app.exchange();
		List<String> keys = List.of("a", "b");
		Map<String, String> queues = new HashMap<>();
		keys.forEach((routingKey) -> queues.put(routingKey, app.queue(exchange, routingKey)));
		DurableRabbit rabbit = app.getBean(DurableRabbit.class);
		int producers = 4;
		int perProducer = 40;
		ExecutorService pool = Executors.newFixedThreadPool(producers);
		CountDownLatch go = new CountDownLatch(1);
		List<Future<?>> running = new ArrayList<>();
		for (int p = 0; p < producers; p++) {
			int producer = p;
			running.add(pool.submit(() -> {
				go.await();
				for (int i = 0; i < perProducer; i++) {
					int seq = i;
					String routingKey = keys.get((producer + i) % keys.size());
					app.transactions.executeWithoutResult(
							(status) -> rabbit.send(exchange, routingKey, Map.of("producer", producer, "seq", seq)));
				}
				return null;
			}));
		}
		go.countDown();
		for (Future<?> producing : running) {
			producing.get(60, TimeUnit.SECONDS);
		}
		pool.shutdown();
		int received = 0;
		for (String routingKey : keys) {
			Map<Integer, Integer> lastSeq = new HashMap<>();
			Message message;
			while ((message = app.rabbit.receive(queues.get(routingKey), 5_000)) != null) {
				Map<?, ?> body = app.getBean(tools.jackson.databind.json.JsonMapper.class)
					.readValue(message.getBody(), Map.class);
				int producer = (Integer) body.get("producer");
				int seq = (Integer) body.get("seq");
				// each producer commits its messages one after the other
				assertThat(seq).as("producer %s on %s", producer, routingKey)
					.isGreaterThan(lastSeq.getOrDefault(producer, -1));
				lastSeq.put(producer, seq);
				received++;
			}
		}
		assertThat(received).isEqualTo(producers * perProducer);
	}

	@Test
	void messagesSentWhileTheBrokerDropsTheRelaysConnectionAreAllDeliveredAfterItReconnects() throws Exception {
		org.junit.jupiter.api.Assumptions.assumeTrue(RabbitBroker.canCloseConnections(),
				"rabbitmqctl cannot list the broker's connections here: the connection-drop test is skipped");
		String exchange = app.exchange();
		String queue = app.queue(exchange, "drops");
		DurableRabbit rabbit = app.getBean(DurableRabbit.class);
		int total = 300;
		List<String> sent = new java.util.concurrent.CopyOnWriteArrayList<>();
		ExecutorService producing = Executors.newSingleThreadExecutor();
		Future<?> producer = producing.submit(() -> {
			for (int i = 0; i < total; i++) {
				int seq = i;
				sent.add(app.transactions.execute((status) -> rabbit.send(exchange, "drops", Map.of("seq", seq))));
			}
			return null;
		});
		int closed = 0;
		try {
			for (int drop = 1; drop <= 3; drop++) {
				int threshold = drop * total / 4;
				// a failed producer fails the test with its own exception
				await().atMost(Duration.ofSeconds(30)).until(() -> sent.size() >= threshold || producer.isDone());
				closed += RabbitBroker.closeConnections(CONNECTION);
			}
			producer.get(60, TimeUnit.SECONDS);
		}
		finally {
			producing.shutdownNow();
		}
		assertThat(closed).as("relay connections closed by the broker").isPositive();
		Set<String> delivered = new HashSet<>();
		await().atMost(Duration.ofSeconds(60)).until(() -> {
			Message message;
			while ((message = app.rabbit.receive(queue, 100)) != null) {
				delivered.add(message.getMessageProperties().getMessageId());
			}
			if (!delivered.containsAll(sent)) {
				System.out.println("undelivered: " + app.jdbc
					.sql("SELECT status, attempts, last_error FROM eec_effect_intent WHERE idempotency_key IN (:keys)")
					.param("keys", sent.stream().filter((key) -> !delivered.contains(key)).toList())
					.query()
					.listOfRows());
			}
			return delivered.containsAll(sent);
		});
		assertThat(delivered).containsExactlyInAnyOrderElementsOf(sent);
		await().atMost(Duration.ofSeconds(30))
			.until(() -> app.jdbc.sql(
					"SELECT count(*) FROM eec_effect_intent WHERE idempotency_key IN (:keys) AND status <> 'completed'")
				.param("keys", sent)
				.query(Long.class)
				.single() == 0);
	}

}
