package io.ductor.amqp;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import javax.sql.DataSource;

import org.aopalliance.intercept.MethodInterceptor;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import com.rabbitmq.client.Channel;

import org.springframework.amqp.core.AcknowledgeMode;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageBuilder;
import org.springframework.amqp.core.Queue;
import org.springframework.amqp.rabbit.annotation.RabbitListener;
import org.springframework.amqp.rabbit.config.SimpleRabbitListenerContainerFactory;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.amqp.autoconfigure.SimpleRabbitListenerContainerFactoryConfigurer;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.messaging.handler.annotation.Header;
import org.springframework.messaging.handler.annotation.Payload;

import io.ductor.messaging.DuctorMessageHeaders;
import io.ductor.messaging.IdempotentListener;
import io.ductor.test.PostgresExtension;
import io.ductor.test.RabbitBroker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The inbox on {@code @RabbitListener} methods against the real broker: a message
 * delivered twice, redelivered after the body failed, or redelivered after the commit but
 * before the acknowledgement is applied once; one without the key is rejected without
 * requeue.
 */
class RabbitInboxTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	static final String RAW = RabbitBroker.uniqueName("inbox-raw");

	static final String SPRING = RabbitBroker.uniqueName("inbox-spring");

	static final String HEADER = RabbitBroker.uniqueName("inbox-header");

	static final String LOST_ACK = RabbitBroker.uniqueName("inbox-lost-ack");

	private static RabbitApp app;

	private static Listeners listeners;

	@BeforeAll
	static void start() {
		RabbitBroker.assumeAvailable();
		JdbcClient.create(postgres.dataSource())
			.sql("CREATE TABLE inbox_applied (listener text NOT NULL, message_key text NOT NULL, body text NOT NULL)")
			.update();
		app = RabbitApp.start(postgres, InboxApplication.class, "inbox.raw=" + RAW, "inbox.spring=" + SPRING,
				"inbox.header=" + HEADER, "inbox.lost-ack=" + LOST_ACK);
		listeners = app.getBean(Listeners.class);
	}

	@AfterAll
	static void stop() {
		if (app != null) {
			app.close();
		}
	}

	@Test
	void aMessageDeliveredTwiceIsAppliedOnceAndBothDeliveriesAreAcknowledged() throws Exception {
		String key = UUID.randomUUID().toString();
		send(RAW, key, "twice");
		send(RAW, key, "twice");
		await().atMost(Duration.ofSeconds(10)).until(() -> listeners.deliveries(key) == 2);
		awaitDrained(RAW);
		assertThat(applied("raw", key)).isEqualTo(1);
		assertThat(listeners.bodyRuns(key)).isEqualTo(1);
	}

	@Test
	void aListenerThatFailsAfterItsWriteIsRolledBackAndTheRedeliveryAppliesItOnce() throws Exception {
		String key = UUID.randomUUID().toString();
		send(RAW, key, "crash-in-body");
		await().atMost(Duration.ofSeconds(10)).until(() -> applied("raw", key) == 1);
		awaitDrained(RAW);
		assertThat(listeners.bodyRuns(key)).isEqualTo(2);
		assertThat(applied("raw", key)).isEqualTo(1);
	}

	@Test
	void aRedeliveryAfterTheCommitButBeforeTheAckIsAcknowledgedWithoutRunningTheBody() throws Exception {
		String key = UUID.randomUUID().toString();
		send(LOST_ACK, key, "ack lost once");
		await().atMost(Duration.ofSeconds(10)).until(() -> listeners.deliveries(key) == 2);
		awaitDrained(LOST_ACK);
		assertThat(listeners.bodyRuns(key)).isEqualTo(1);
		assertThat(applied("lost-ack", key)).isEqualTo(1);
	}

	@Test
	void aMessageWithoutTheKeyIsRejectedWithoutRequeueAndNeverApplied() throws Exception {
		String messageId = UUID.randomUUID().toString();
		app.rabbit.send("", RAW,
				MessageBuilder.withBody("no key".getBytes(StandardCharsets.UTF_8)).setMessageId(messageId).build());
		await().atMost(Duration.ofSeconds(10)).until(() -> listeners.deliveries(messageId) >= 1);
		awaitDrained(RAW);
		assertThat(listeners.deliveries(messageId)).isEqualTo(1);
		assertThat(listeners.bodyRuns(messageId)).isZero();
	}

	@Test
	void springMessagingAndHeaderArgumentsAreReadToo() throws Exception {
		String key = UUID.randomUUID().toString();
		send(SPRING, key, "spring");
		send(SPRING, key, "spring");
		send(HEADER, key, "header");
		send(HEADER, key, "header");
		await().atMost(Duration.ofSeconds(10)).until(() -> applied("spring", key) == 1 && applied("header", key) == 1);
		awaitDrained(SPRING);
		awaitDrained(HEADER);
		assertThat(applied("spring", key)).isEqualTo(1);
		assertThat(applied("header", key)).isEqualTo(1);
	}

	private static void send(String queue, String key, String body) {
		app.rabbit.send("", queue,
				MessageBuilder.withBody(body.getBytes(StandardCharsets.UTF_8))
					.setHeader(DuctorMessageHeaders.IDEMPOTENCY_KEY, key)
					.setMessageId(key)
					.build());
	}

	/** Every message of the queue delivered and acknowledged, as the broker counts. */
	private static void awaitDrained(String queue) {
		org.junit.jupiter.api.Assumptions.assumeTrue(RabbitBroker.canCloseConnections(),
				"rabbitmqctl cannot count the queue's unacknowledged messages here");
		await().atMost(Duration.ofSeconds(15)).until(() -> RabbitBroker.queueDepth(queue) == 0);
	}

	private static long applied(String listener, String key) {
		return app.jdbc.sql("SELECT count(*) FROM inbox_applied WHERE listener = ? AND message_key = ?")
			.params(listener, key)
			.query(Long.class)
			.single();
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	static class InboxApplication {

		@Bean
		Listeners listeners(DataSource dataSource) {
			return new Listeners(JdbcClient.create(dataSource));
		}

		@Bean
		Queue rawQueue(@Value("${inbox.raw}") String name) {
			return new Queue(name, false, false, true);
		}

		@Bean
		Queue lostAckQueue(@Value("${inbox.lost-ack}") String name) {
			return new Queue(name, false, false, true);
		}

		@Bean
		Queue springQueue(@Value("${inbox.spring}") String name) {
			return new Queue(name, false, false, true);
		}

		@Bean
		Queue headerQueue(@Value("${inbox.header}") String name) {
			return new Queue(name, false, false, true);
		}

		/**
		 * Counts deliveries by message id, and throws once after a
		 * {@code crash-after-commit} message was applied: as if the consumer died after
		 * the commit, before its acknowledgement reached the broker.
		 */
		@Bean
		SimpleRabbitListenerContainerFactory inboxFactory(SimpleRabbitListenerContainerFactoryConfigurer configurer,
				ConnectionFactory connectionFactory, ObjectProvider<Listeners> listenersBean) {
			SimpleRabbitListenerContainerFactory factory = new SimpleRabbitListenerContainerFactory();
			configurer.configure(factory, connectionFactory);
			factory.setAdviceChain((MethodInterceptor) (invocation) -> {
				Listeners listeners = listenersBean.getObject();
				Message message = (Message) invocation.getArguments()[1];
				String id = message.getMessageProperties().getMessageId();
				listeners.delivered(id);
				return invocation.proceed();
			});
			return factory;
		}

		/**
		 * Acknowledges by hand after the listener returned, except the first delivery of
		 * each message, which it sends back to the queue: as if the consumer died after
		 * the commit, before its acknowledgement reached the broker.
		 */
		@Bean
		SimpleRabbitListenerContainerFactory lostAckFactory(SimpleRabbitListenerContainerFactoryConfigurer configurer,
				ConnectionFactory connectionFactory, ObjectProvider<Listeners> listenersBean) {
			SimpleRabbitListenerContainerFactory factory = new SimpleRabbitListenerContainerFactory();
			configurer.configure(factory, connectionFactory);
			factory.setAcknowledgeMode(AcknowledgeMode.MANUAL);
			factory.setAdviceChain((MethodInterceptor) (invocation) -> {
				Listeners listeners = listenersBean.getObject();
				Channel channel = (Channel) invocation.getArguments()[0];
				Message message = (Message) invocation.getArguments()[1];
				String id = message.getMessageProperties().getMessageId();
				long tag = message.getMessageProperties().getDeliveryTag();
				listeners.delivered(id);
				Object result = invocation.proceed();
				if (listeners.firstLostAck(id)) {
					channel.basicNack(tag, false, true);
				}
				else {
					channel.basicAck(tag, false);
				}
				return result;
			});
			return factory;
		}

	}

	static class Listeners {

		final JdbcClient jdbc;

		final Map<String, AtomicInteger> deliveries = new ConcurrentHashMap<>();

		final Map<String, AtomicInteger> bodyRuns = new ConcurrentHashMap<>();

		final java.util.Set<String> crashedInBody = ConcurrentHashMap.newKeySet();

		final java.util.Set<String> lostAcks = ConcurrentHashMap.newKeySet();

		Listeners(JdbcClient jdbc) {
			this.jdbc = jdbc;
		}

		@RabbitListener(queues = "${inbox.raw}", containerFactory = "inboxFactory")
		@IdempotentListener
		public void raw(Message message) {
			apply("raw", message.getMessageProperties().getHeader(DuctorMessageHeaders.IDEMPOTENCY_KEY),
					new String(message.getBody(), StandardCharsets.UTF_8));
		}

		@RabbitListener(queues = "${inbox.lost-ack}", containerFactory = "lostAckFactory")
		@IdempotentListener
		public void lostAck(Message message) {
			apply("lost-ack", message.getMessageProperties().getHeader(DuctorMessageHeaders.IDEMPOTENCY_KEY),
					new String(message.getBody(), StandardCharsets.UTF_8));
		}

		@RabbitListener(queues = "${inbox.spring}")
		@IdempotentListener
		public void spring(org.springframework.messaging.Message<String> message) {
			apply("spring", (String) message.getHeaders().get(DuctorMessageHeaders.IDEMPOTENCY_KEY),
					message.getPayload());
		}

		@RabbitListener(queues = "${inbox.header}")
		@IdempotentListener
		public void header(@Payload String body,
				@Header(name = DuctorMessageHeaders.IDEMPOTENCY_KEY, required = false) String key) {
			apply("header", key, body);
		}

		private void apply(String listener, String key, String body) {
			this.bodyRuns.computeIfAbsent(key, (any) -> new AtomicInteger()).incrementAndGet();
			this.jdbc.sql("INSERT INTO inbox_applied (listener, message_key, body) VALUES (?, ?, ?)")
				.params(listener, key, body)
				.update();
			if (body.equals("crash-in-body") && this.crashedInBody.add(key)) {
				throw new IllegalStateException("crash after the write, before the commit");
			}
		}

		// called through the bean's proxy: its fields are the target's

		public void delivered(String id) {
			this.deliveries.computeIfAbsent(id, (any) -> new AtomicInteger()).incrementAndGet();
		}

		public boolean firstLostAck(String id) {
			return this.lostAcks.add(id);
		}

		public int deliveries(String id) {
			AtomicInteger count = this.deliveries.get(id);
			return (count != null) ? count.get() : 0;
		}

		public int bodyRuns(String key) {
			AtomicInteger count = this.bodyRuns.get(key);
			return (count != null) ? count.get() : 0;
		}

	}

}
