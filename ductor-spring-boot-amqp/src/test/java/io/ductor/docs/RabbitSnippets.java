package io.ductor.docs;

import java.math.BigDecimal;

import org.springframework.amqp.rabbit.annotation.RabbitListener;
import org.springframework.amqp.support.converter.JacksonJsonMessageConverter;
import org.springframework.amqp.support.converter.MessageConverter;
import org.springframework.context.annotation.Bean;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.messaging.handler.annotation.Header;
import org.springframework.messaging.handler.annotation.Payload;
import org.springframework.transaction.annotation.Transactional;

import io.ductor.amqp.DurableRabbit;
import io.ductor.messaging.DuctorMessageHeaders;
import io.ductor.messaging.IdempotentListener;

/**
 * The Java blocks of {@code docs/messaging.md} for RabbitMQ, run end to end by
 * {@code RabbitSnippetsTest}.
 */
final class RabbitSnippets {

	private RabbitSnippets() {
	}

	record OrderPlaced(long orderId, BigDecimal total) {
	}

	static class Orders {

		private final JdbcClient jdbc;

		private final DurableRabbit rabbit;

		Orders(JdbcClient jdbc, DurableRabbit rabbit) {
			this.jdbc = jdbc;
			this.rabbit = rabbit;
		}

		// tag::rabbit-publish[]
		@Transactional
		public void placeOrder(long orderId, BigDecimal total) {
			this.jdbc.sql("INSERT INTO orders (id, total) VALUES (?, ?)").params(orderId, total).update();
			// sent after the commit, confirmed by the broker; nothing on a rollback
			this.rabbit.send("shop", "order.placed", new OrderPlaced(orderId, total));
		}
		// end::rabbit-publish[]

	}

	static class Shipping {

		private final JdbcClient jdbc;

		Shipping(JdbcClient jdbc) {
			this.jdbc = jdbc;
		}

		// tag::rabbit-inbox[]
		@RabbitListener(queues = "shipping.order-placed")
		@IdempotentListener
		public void onOrderPlaced(@Payload OrderPlaced event,
				@Header(DuctorMessageHeaders.IDEMPOTENCY_KEY) String key) {
			// runs once per message, in the transaction that records the key
			this.jdbc.sql("INSERT INTO shipments (order_id) VALUES (?)").param(event.orderId()).update();
		}
		// end::rabbit-inbox[]

	}

	static class Converter {

		// tag::rabbit-json[]
		@Bean
		MessageConverter messageConverter() {
			return new JacksonJsonMessageConverter();
		}
		// end::rabbit-json[]

	}

}
