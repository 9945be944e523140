package io.ductor.amqp.autoconfigure;

import javax.sql.DataSource;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;

import io.ductor.amqp.internal.RabbitRelay;
import io.ductor.amqp.internal.RabbitRelayHealthIndicator;

/**
 * The {@code ductorRabbit} health contributor, with Spring Boot's health module
 * ({@code management.health.ductorRabbit.enabled=false} turns it off): down when the
 * relay cannot connect to the broker, with the relay's backlog as details.
 */
@AutoConfiguration(after = DuctorAmqpAutoConfiguration.class)
@ConditionalOnClass({ HealthIndicator.class, ConditionalOnEnabledHealthIndicator.class })
@ConditionalOnBean({ RabbitRelay.class, DataSource.class })
@ConditionalOnEnabledHealthIndicator("ductorRabbit")
public final class DuctorAmqpHealthAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean(name = "ductorRabbitHealthIndicator")
	RabbitRelayHealthIndicator ductorRabbitHealthIndicator(RabbitRelay relay, DataSource dataSource) {
		return new RabbitRelayHealthIndicator(relay.connectionFactory(), dataSource);
	}

}
