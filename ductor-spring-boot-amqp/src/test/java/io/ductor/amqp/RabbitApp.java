package io.ductor.amqp;

import java.util.ArrayList;
import java.util.List;

import javax.sql.DataSource;

import org.springframework.amqp.core.AmqpAdmin;
import org.springframework.amqp.core.Binding;
import org.springframework.amqp.core.BindingBuilder;
import org.springframework.amqp.core.DirectExchange;
import org.springframework.amqp.core.Queue;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import io.ductor.test.PostgresExtension;
import io.ductor.test.RabbitBroker;

/**
 * An application on a test database and the shared RabbitMQ server, with the exchanges
 * and queues it declares for a test deleted on close.
 */
final class RabbitApp implements AutoCloseable {

	final ConfigurableApplicationContext context;

	final JdbcClient jdbc;

	final TransactionTemplate transactions;

	final RabbitTemplate rabbit;

	final AmqpAdmin admin;

	private final List<String> exchanges = new ArrayList<>();

	private final List<String> queues = new ArrayList<>();

	private RabbitApp(ConfigurableApplicationContext context) {
		this.context = context;
		this.jdbc = JdbcClient.create(context.getBean(DataSource.class));
		this.transactions = new TransactionTemplate(context.getBean(PlatformTransactionManager.class));
		this.rabbit = context.getBean(RabbitTemplate.class);
		this.admin = context.getBean(AmqpAdmin.class);
	}

	static RabbitApp start(PostgresExtension postgres, Class<?> application, String... more) {
		List<String> properties = new ArrayList<>(List.of(postgres.springProperties()));
		properties.addAll(List.of(RabbitBroker.springProperties()));
		properties.addAll(List.of("spring.datasource.hikari.maximum-pool-size=8", "ductor.effects.backoff.initial=50ms",
				"ductor.effects.backoff.max=200ms", "ductor.effects.drainer.poll-interval=100ms"));
		properties.addAll(List.of(more));
		return new RabbitApp(new SpringApplicationBuilder(application).properties(properties.toArray(String[]::new))
			.web(org.springframework.boot.WebApplicationType.NONE)
			.run());
	}

	/** A direct exchange of its own, deleted on close. */
	String exchange() {
		String name = RabbitBroker.uniqueName("exchange");
		this.admin.declareExchange(new DirectExchange(name, false, true));
		this.exchanges.add(name);
		return name;
	}

	/** A queue of its own bound to {@code exchange} with {@code routingKey}. */
	String queue(String exchange, String routingKey) {
		String name = RabbitBroker.uniqueName("queue");
		Queue queue = new Queue(name, false, false, false);
		this.admin.declareQueue(queue);
		this.queues.add(name);
		Binding binding = BindingBuilder.bind(queue).to(new DirectExchange(exchange)).with(routingKey);
		this.admin.declareBinding(binding);
		return name;
	}

	<T> T getBean(Class<T> type) {
		return this.context.getBean(type);
	}

	String receipt(String key) {
		return this.jdbc.sql("SELECT receipt FROM eec_effect_intent WHERE idempotency_key = ?")
			.param(key)
			.query(String.class)
			.optional()
			.orElse(null);
	}

	String status(String key) {
		return this.jdbc.sql("SELECT status FROM eec_effect_intent WHERE idempotency_key = ?")
			.param(key)
			.query(String.class)
			.optional()
			.orElse(null);
	}

	@Override
	public void close() {
		try {
			this.queues.forEach(this.admin::deleteQueue);
			this.exchanges.forEach(this.admin::deleteExchange);
		}
		finally {
			this.context.close();
		}
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	static class Application {

	}

}
