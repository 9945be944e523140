package io.ductor.modulithrelay;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import javax.sql.DataSource;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import tools.jackson.core.type.TypeReference;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.amqp.core.AmqpAdmin;
import org.springframework.amqp.core.BindingBuilder;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.Queue;
import org.springframework.amqp.core.TopicExchange;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import io.ductor.messaging.DuctorMessageHeaders;
import io.ductor.modulithrelay.ExternalizingApp.OrderCompleted;
import io.ductor.test.PostgresExtension;
import io.ductor.test.RabbitBroker;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Modulith's externalized events through Ductor's RabbitMQ relay, on PostgreSQL and the
 * shared RabbitMQ server: the routing target is the exchange, the routing key the AMQP
 * routing key; the message carries the intent's key; nothing for a rolled-back
 * transaction.
 */
class ExternalizedThroughRabbitTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	static ConfigurableApplicationContext context;

	static TransactionTemplate tx;

	static JdbcClient jdbc;

	static RabbitTemplate rabbit;

	static String queue;

	@BeforeAll
	static void start() {
		List<String> properties = new ArrayList<>(List.of(postgres.database().springProperties()));
		properties.addAll(List.of(RabbitBroker.springProperties()));
		properties.addAll(List.of("spring.main.banner-mode=off", "ductor.kafka.enabled=false",
				"ductor.effects.drainer.poll-interval=100ms", "ductor.effects.backoff.initial=100ms",
				"ductor.effects.backoff.max=1s"));
		context = new SpringApplicationBuilder(ExternalizingApp.class).web(WebApplicationType.NONE)
			.properties(properties.toArray(String[]::new))
			.run();
		tx = new TransactionTemplate(context.getBean(PlatformTransactionManager.class));
		jdbc = JdbcClient.create(context.getBean(DataSource.class));
		rabbit = context.getBean(RabbitTemplate.class);
		AmqpAdmin admin = context.getBean(AmqpAdmin.class);
		TopicExchange exchange = new TopicExchange("orders.completed", false, false);
		admin.declareExchange(exchange);
		queue = "modulith-externalized-" + UUID.randomUUID();
		Queue declared = new Queue(queue, false, false, false);
		admin.declareQueue(declared);
		admin.declareBinding(BindingBuilder.bind(declared).to(exchange).with("#"));
	}

	@AfterAll
	static void stop() {
		if (context != null) {
			context.getBean(AmqpAdmin.class).deleteQueue(queue);
			context.close();
		}
	}

	@Test
	void aCommittedEventIsSentWithItsRoutingKeyAndIdempotencyKeyAndARolledBackOneIsNot() {
		String rolledBack = "order-" + UUID.randomUUID();
		tx.executeWithoutResult((status) -> {
			context.publishEvent(new OrderCompleted(rolledBack, 1));
			status.setRollbackOnly();
		});
		String order = "order-" + UUID.randomUUID();
		tx.executeWithoutResult((status) -> context.publishEvent(new OrderCompleted(order, 2)));
		String key = jdbc.sql("SELECT idempotency_key FROM eec_effect_intent WHERE effect_name = ? AND payload->>1 = ?")
			.params("ductor.amqp.send", order)
			.query(String.class)
			.single();
		Message message = rabbit.receive(queue, 30_000);
		assertThat(message).as("the committed event's message").isNotNull();
		assertThat(message.getMessageProperties().getReceivedRoutingKey()).isEqualTo(order);
		assertThat(message.getMessageProperties().getMessageId()).isEqualTo(key);
		assertThat((Object) message.getMessageProperties().getHeader(DuctorMessageHeaders.IDEMPOTENCY_KEY))
			.hasToString(key);
		Map<String, Object> body = JsonMapper.shared()
			.readValue(new String(message.getBody(), StandardCharsets.UTF_8), new TypeReference<>() {
			});
		assertThat(body).isEqualTo(Map.of("orderId", order, "seq", 2));
		assertThat(rabbit.receive(queue, 500)).as("nothing for the rolled-back event").isNull();
	}

}
