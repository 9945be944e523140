package io.ductor.amqp;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.boot.amqp.autoconfigure.RabbitAutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration;

import io.ductor.amqp.autoconfigure.DuctorAmqpAutoConfiguration;
import io.ductor.amqp.autoconfigure.DuctorAmqpHealthAutoConfiguration;
import io.ductor.amqp.internal.AmqpMessageReader;
import io.ductor.amqp.internal.RabbitRelay;
import io.ductor.amqp.internal.RabbitRelayHealthIndicator;
import io.ductor.autoconfigure.DuctorAutoConfiguration;
import io.ductor.effect.autoconfigure.DuctorEffectsAutoConfiguration;
import io.ductor.idempotency.autoconfigure.DuctorIdempotencyAutoConfiguration;
import io.ductor.messaging.autoconfigure.DuctorMessagingAutoConfiguration;
import io.ductor.test.PostgresExtension;
import io.ductor.test.RabbitBroker;

import static org.assertj.core.api.Assertions.assertThat;

class DuctorAmqpAutoConfigurationTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class,
				DataSourceTransactionManagerAutoConfiguration.class, TransactionAutoConfiguration.class,
				JacksonAutoConfiguration.class, DuctorAutoConfiguration.class, DuctorEffectsAutoConfiguration.class,
				DuctorIdempotencyAutoConfiguration.class, DuctorMessagingAutoConfiguration.class,
				RabbitAutoConfiguration.class, DuctorAmqpAutoConfiguration.class,
				DuctorAmqpHealthAutoConfiguration.class))
		.withPropertyValues(postgres.springProperties())
		.withPropertyValues(RabbitBroker.springProperties())
		.withPropertyValues("spring.datasource.hikari.maximum-pool-size=2", "ductor.effects.drainer.enabled=false",
				"ductor.effects.reconciler.enabled=false", "ductor.effects.alarm-scheduler.enabled=false",
				"ductor.retention.enabled=false", "ductor.idempotency.sweeper.enabled=false");

	@Test
	void theRelayPublishesOnAFactoryOfItsOwnWithConfirmsAndReturnsAndLeavesTheApplicationsAlone() {
		this.runner.run((context) -> {
			assertThat(context).hasSingleBean(DurableRabbit.class)
				.hasSingleBean(RabbitRelay.class)
				.hasSingleBean(AmqpMessageReader.class)
				.hasSingleBean(RabbitTemplate.class)
				.hasSingleBean(ConnectionFactory.class);
			CachingConnectionFactory relay = context.getBean(RabbitRelay.class).connectionFactory();
			assertThat(relay).isNotSameAs(context.getBean(ConnectionFactory.class));
			assertThat(relay.isPublisherConfirms()).isTrue();
			assertThat(relay.isPublisherReturns()).isTrue();
			assertThat(context.getBean(ConnectionFactory.class).isPublisherConfirms()).isFalse();
		});
	}

	@Test
	void anApplicationsDurableRabbitIsKept() {
		DurableRabbit own = (message) -> "own";
		this.runner.withBean(DurableRabbit.class, () -> own)
			.run((context) -> assertThat(context.getBean(DurableRabbit.class)).isSameAs(own));
	}

	@Test
	void withoutSpringRabbitNothingIsConfigured() {
		this.runner.withClassLoader(new FilteredClassLoader(RabbitTemplate.class))
			.run((context) -> assertThat(context).hasNotFailed()
				.doesNotHaveBean(DurableRabbit.class)
				.doesNotHaveBean(RabbitRelay.class));
	}

	@Test
	void itCanBeTurnedOff() {
		this.runner.withPropertyValues("ductor.amqp.enabled=false")
			.run((context) -> assertThat(context).hasNotFailed()
				.doesNotHaveBean(DurableRabbit.class)
				.doesNotHaveBean(RabbitRelay.class));
	}

	@Test
	void withoutDuctorsEffectsNothingIsConfigured() {
		this.runner.withPropertyValues("ductor.enabled=false")
			.run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean(DurableRabbit.class));
	}

	@Test
	void aBadConfirmTimeoutFailsStartUpNamingTheProperty() {
		this.runner.withPropertyValues("ductor.amqp.confirm-timeout=0s")
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.rootCause()
				.hasMessageContaining("ductor.amqp.confirm-timeout"));
	}

	@Test
	void aMisspelledKeyFailsStartUpNamingIt() {
		this.runner.withPropertyValues("ductor.amqp.confirm-timout=5s")
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.hasMessageContaining("ductor.amqp.confirm-timout"));
	}

	@Test
	void theHealthIsDownWhenTheBrokerDoesNotAnswerAndUpWithTheBacklogWhenItDoes() {
		this.runner.withPropertyValues("spring.rabbitmq.port=1", "spring.rabbitmq.connection-timeout=1s")
			.run((context) -> {
				Health health = context.getBean(RabbitRelayHealthIndicator.class).health(true);
				assertThat(health.getStatus()).isEqualTo(Status.DOWN);
				assertThat(health.getDetails()).containsEntry("broker", "unreachable").containsEntry("pending", 0L);
			});
		RabbitBroker.assumeAvailable();
		this.runner.run((context) -> {
			Health health = context.getBean(RabbitRelayHealthIndicator.class).health(true);
			assertThat(health.getStatus()).isEqualTo(Status.UP);
			assertThat(health.getDetails()).containsEntry("broker", "reachable").containsEntry("failed", 0L);
		});
	}

	@Test
	void theHealthContributionCanBeTurnedOff() {
		this.runner.withPropertyValues("management.health.ductorRabbit.enabled=false")
			.run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean(RabbitRelayHealthIndicator.class));
	}

}
