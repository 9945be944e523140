package io.ductor.amqp;

import java.time.Duration;
import java.util.Map;
import java.util.UUID;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.amqp.core.BindingBuilder;
import org.springframework.amqp.core.DirectExchange;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.Queue;
import org.springframework.amqp.core.QueueBuilder;
import org.springframework.amqp.core.QueueBuilder.Overflow;

import io.ductor.test.PostgresExtension;
import io.ductor.test.RabbitBroker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.awaitility.Awaitility.await;

/**
 * The limits of an AMQP address: a routing key is any text of up to 255 bytes in UTF-8,
 * and so is a message id. What the broker accepts is recorded and delivered; what it can
 * never carry is refused at the call, not committed as a message no attempt can send.
 */
class RabbitAddressLimitsTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	private static RabbitApp app;

	@BeforeAll
	static void start() {
		RabbitBroker.assumeAvailable();
		app = RabbitApp.start(postgres, RabbitApp.Application.class, "ductor.effects.max-attempts=2",
				"ductor.amqp.connection-name=ductor-relay-" + UUID.randomUUID());
	}

	@AfterAll
	static void stop() {
		if (app != null) {
			app.close();
		}
	}

	@Test
	void aLongRoutingKeyTheBrokerAcceptsIsRecordedAndDelivered() {
		String exchange = app.exchange();
		String routingKey = "order.placed." + "x".repeat(220);
		String queue = app.queue(exchange, routingKey);
		DurableRabbit rabbit = app.getBean(DurableRabbit.class);
		String key = app.transactions.execute((status) -> rabbit.send(exchange, routingKey, Map.of("orderId", 7)));
		Message message = app.rabbit.receive(queue, 10_000);
		assertThat(message).isNotNull();
		assertThat(message.getMessageProperties().getMessageId()).isEqualTo(key);
		await().atMost(Duration.ofSeconds(10)).until(() -> "completed".equals(app.status(key)));
	}

	@Test
	void aMessageTheBrokerNacksIsRetriedThenFailedNeverCompleted() {
		String exchange = app.exchange();
		String queue = RabbitBroker.uniqueName("full");
		// a queue that holds nothing and refuses what overflows: the broker nacks
		app.admin.declareQueue(
				QueueBuilder.nonDurable(queue).autoDelete().maxLength(0).overflow(Overflow.rejectPublish).build());
		app.admin.declareBinding(BindingBuilder.bind(new Queue(queue)).to(new DirectExchange(exchange)).with("full"));
		DurableRabbit rabbit = app.getBean(DurableRabbit.class);
		String key = app.transactions.execute((status) -> rabbit.send(exchange, "full", "refused"));
		await().atMost(Duration.ofSeconds(20)).until(() -> "failed".equals(app.status(key)));
		assertThat(app.jdbc.sql("SELECT last_error FROM eec_effect_intent WHERE idempotency_key = ?")
			.param(key)
			.query(String.class)
			.single()).contains("nack");
		assertThat(app.receipt(key)).isNull();
		app.admin.deleteQueue(queue);
	}

	@Test
	void aRoutingKeyOrAKeyLongerThanAnAmqpShortStringIsRefusedAtTheCall() {
		// 100 characters of 3 bytes each: 300 bytes, more than a short string holds
		String wide = "\u4e16".repeat(100);
		assertThatIllegalArgumentException().isThrownBy(() -> RabbitMessage.of("shop", wide, "payload"))
			.withMessageContaining("255");
		assertThatIllegalArgumentException().isThrownBy(() -> RabbitMessage.of(wide, "order.placed", "payload"))
			.withMessageContaining("255");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> RabbitMessage.of("shop", "order.placed", "payload").withKey(wide))
			.withMessageContaining("255");
	}

}
