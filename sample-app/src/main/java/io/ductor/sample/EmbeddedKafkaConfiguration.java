package io.ductor.sample;

import java.util.List;

import org.springframework.boot.autoconfigure.condition.ConditionalOnExpression;
import org.springframework.boot.kafka.autoconfigure.KafkaConnectionDetails;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Starts a single-node Kafka broker inside the sample when no
 * {@code spring.kafka.bootstrap-servers} is set, so the shop publishes and consumes its
 * "order placed" events with one command on a machine that has only a JDK. Its topics
 * live as long as the process; with {@code spring.kafka.bootstrap-servers} the shop uses
 * that broker instead.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnExpression("'${spring.kafka.bootstrap-servers:}'.isEmpty()")
class EmbeddedKafkaConfiguration {

	// stopped by the context, after the listeners and Ductor's relay that use it
	@Bean
	InProcessKafka inProcessKafka() {
		return new InProcessKafka("sample.kafka.embedded-brokers");
	}

	@Bean
	KafkaConnectionDetails kafkaConnectionDetails(InProcessKafka kafka) {
		List<String> servers = List.of(kafka.bootstrapServers().split(","));
		return () -> servers;
	}

}
