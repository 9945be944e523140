package io.ductor.amqp.autoconfigure;

import java.time.Duration;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * Ductor's RabbitMQ messaging ({@code ductor.amqp.*}).
 *
 * @param enabled Whether DurableRabbit and the relay are configured when Spring AMQP is
 * on the class path
 * @param confirmTimeout How long the relay waits for the broker to confirm a message
 * before the attempt fails and is retried
 * @param connectionName Name of the relay's own connection to the broker, as the broker's
 * management tools show it
 */
@ConfigurationProperties("ductor.amqp")
public record DuctorAmqpProperties(@DefaultValue("true") boolean enabled, @DefaultValue("10s") Duration confirmTimeout,
		@DefaultValue("ductor-relay") String connectionName) {

	public DuctorAmqpProperties {
		if (confirmTimeout == null || confirmTimeout.isNegative() || confirmTimeout.isZero()) {
			throw new IllegalArgumentException(
					"ductor.amqp.confirm-timeout must be positive but was " + confirmTimeout);
		}
		if (connectionName == null || connectionName.isBlank()) {
			throw new IllegalArgumentException("ductor.amqp.connection-name must not be blank");
		}
	}

}
