package io.ductor.kafka.autoconfigure;

import java.time.Duration;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * Ductor's Kafka outbox: {@code ductor.kafka.*}. The producer itself is configured with
 * Spring Boot's {@code spring.kafka.*} properties; Ductor's relay sends with a producer
 * of its own derived from them, with {@code acks=all} and idempotence on.
 *
 * @param enabled Whether Ductor's Kafka outbox (DurableKafka and its relay) is on
 * @param sendTimeout How long the relay waits for the broker's acknowledgement of one
 * record before the attempt fails and the intent is retried
 * @param health The health contribution
 */
@ConfigurationProperties("ductor.kafka")
public record DuctorKafkaProperties(@DefaultValue("true") boolean enabled, @DefaultValue("30s") Duration sendTimeout,
		@DefaultValue Health health) {

	public DuctorKafkaProperties {
		if (sendTimeout.isZero() || sendTimeout.isNegative()) {
			throw new IllegalArgumentException("ductor.kafka.send-timeout must be positive but was " + sendTimeout);
		}
	}

	/**
	 * The {@code kafka} health contribution.
	 *
	 * @param enabled Whether the health contribution (broker reachable, relay backlog) is
	 * on
	 * @param timeout How long the check waits for the broker to describe the cluster
	 */
	public record Health(@DefaultValue("true") boolean enabled, @DefaultValue("2s") Duration timeout) {

		public Health {
			if (timeout.isZero() || timeout.isNegative()) {
				throw new IllegalArgumentException("ductor.kafka.health.timeout must be positive but was " + timeout);
			}
		}

	}

}
