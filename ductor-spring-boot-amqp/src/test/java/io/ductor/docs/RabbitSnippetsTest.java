package io.ductor.docs;

import java.math.BigDecimal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import javax.sql.DataSource;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.amqp.core.AmqpAdmin;
import org.springframework.amqp.core.Binding;
import org.springframework.amqp.core.BindingBuilder;
import org.springframework.amqp.core.DirectExchange;
import org.springframework.amqp.core.Queue;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.jdbc.core.simple.JdbcClient;

import io.ductor.amqp.DurableRabbit;
import io.ductor.messaging.DuctorMessageHeaders;
import io.ductor.test.PostgresExtension;
import io.ductor.test.RabbitBroker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The documented publisher and listener, end to end on the real broker (with the
 * documented exchange and queue, deleted afterwards): an order placed in a transaction is
 * shipped once, even when the broker delivers its message again.
 */
class RabbitSnippetsTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	@Test
	void anOrderPlacedInATransactionIsShippedOnceEvenWhenDeliveredTwice() {
		RabbitBroker.assumeAvailable();
		JdbcClient setup = JdbcClient.create(postgres.dataSource());
		setup.sql("CREATE TABLE orders (id bigint PRIMARY KEY, total numeric NOT NULL)").update();
		setup.sql("CREATE TABLE shipments (order_id bigint NOT NULL)").update();
		List<String> properties = new ArrayList<>(List.of(postgres.springProperties()));
		properties.addAll(List.of(RabbitBroker.springProperties()));
		try (ConfigurableApplicationContext context = new SpringApplicationBuilder(Application.class)
			.properties(properties.toArray(String[]::new))
			.web(WebApplicationType.NONE)
			.run()) {
			AmqpAdmin admin = context.getBean(AmqpAdmin.class);
			try {
				RabbitSnippets.Orders orders = context.getBean(RabbitSnippets.Orders.class);
				JdbcClient jdbc = JdbcClient.create(context.getBean(DataSource.class));
				orders.placeOrder(7, new BigDecimal("19.90"));
				await().atMost(Duration.ofSeconds(15)).until(() -> shipped(jdbc, 7) == 1);
				// the broker delivers order 7's message again, then order 8's
				String key = jdbc.sql("SELECT idempotency_key FROM eec_effect_intent WHERE effect_name = ?")
					.param(DurableRabbit.EFFECT)
					.query(String.class)
					.single();
				context.getBean(RabbitTemplate.class)
					.convertAndSend("shop", "order.placed", new RabbitSnippets.OrderPlaced(7, new BigDecimal("19.90")),
							(message) -> {
								message.getMessageProperties().setHeader(DuctorMessageHeaders.IDEMPOTENCY_KEY, key);
								return message;
							});
				orders.placeOrder(8, BigDecimal.TEN);
				await().atMost(Duration.ofSeconds(15)).until(() -> shipped(jdbc, 8) == 1);
				assertThat(shipped(jdbc, 7)).isEqualTo(1);
			}
			finally {
				admin.deleteQueue("shipping.order-placed");
				admin.deleteExchange("shop");
			}
		}
	}

	private static long shipped(JdbcClient jdbc, long orderId) {
		return jdbc.sql("SELECT count(*) FROM shipments WHERE order_id = ?").param(orderId).query(Long.class).single();
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	@Import(RabbitSnippets.Converter.class)
	static class Application {

		@Bean
		DirectExchange shop() {
			return new DirectExchange("shop", false, true);
		}

		@Bean
		Queue shippingQueue() {
			return new Queue("shipping.order-placed", false, false, true);
		}

		@Bean
		Binding binding(DirectExchange shop, Queue shippingQueue) {
			return BindingBuilder.bind(shippingQueue).to(shop).with("order.placed");
		}

		@Bean
		RabbitSnippets.Orders orders(DataSource dataSource, DurableRabbit rabbit) {
			return new RabbitSnippets.Orders(JdbcClient.create(dataSource), rabbit);
		}

		@Bean
		RabbitSnippets.Shipping shipping(DataSource dataSource) {
			return new RabbitSnippets.Shipping(JdbcClient.create(dataSource));
		}

	}

}
