package io.ductor.kafka.autoconfigure;

import java.util.HashMap;
import java.util.Map;

import javax.sql.DataSource;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import org.apache.kafka.clients.producer.ProducerConfig;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.kafka.autoconfigure.KafkaAutoConfiguration;
import org.springframework.boot.kafka.autoconfigure.KafkaProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.kafka.core.DefaultKafkaProducerFactory;
import org.springframework.kafka.core.KafkaTemplate;
import org.springframework.kafka.core.ProducerFactory;

import io.ductor.autoconfigure.internal.DuctorConfigurationException;
import io.ductor.effect.EffectOutbox;
import io.ductor.effect.autoconfigure.DuctorEffectsAutoConfiguration;
import io.ductor.idempotency.IdempotencyService;
import io.ductor.json.internal.JsonCodec;
import io.ductor.kafka.DurableKafka;
import io.ductor.kafka.internal.DefaultDurableKafka;
import io.ductor.kafka.internal.KafkaMessageReader;
import io.ductor.kafka.internal.KafkaRelay;
import io.ductor.kafka.internal.KafkaRelayHealthIndicator;
import io.ductor.kafka.internal.MicrometerKafkaRelayMetrics;
import io.ductor.kafka.internal.RelayProducerConfig;
import io.ductor.messaging.autoconfigure.DuctorMessagingAutoConfiguration;

/**
 * Ductor's Kafka outbox ({@link DurableKafka} and its relay) when Spring Kafka and
 * Ductor's effects are there, and the Kafka argument reader of the inbox. The relay sends
 * with a producer of its own, derived from the application's {@link ProducerFactory}
 * (Spring Boot's, configured by {@code spring.kafka.*}) with {@code acks=all} and
 * idempotence on; a configuration that contradicts them fails start-up.
 */
@AutoConfiguration(after = { KafkaAutoConfiguration.class, DuctorEffectsAutoConfiguration.class,
		DuctorMessagingAutoConfiguration.class })
@ConditionalOnClass(KafkaTemplate.class)
@EnableConfigurationProperties(DuctorKafkaProperties.class)
public final class DuctorKafkaAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnBean(IdempotencyService.class)
	@Order(Ordered.HIGHEST_PRECEDENCE)
	KafkaMessageReader ductorKafkaMessageReader() {
		return new KafkaMessageReader();
	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnBean({ EffectOutbox.class, JsonCodec.class, ProducerFactory.class })
	@ConditionalOnBooleanProperty(name = "ductor.kafka.enabled", matchIfMissing = true)
	static class OutboxConfiguration {

		@Bean
		@ConditionalOnMissingBean
		KafkaRelay ductorKafkaRelay(ProducerFactory<?, ?> producerFactory, JsonCodec codec,
				DuctorKafkaProperties properties, ObjectProvider<ObservationRegistry> observationRegistry,
				ObjectProvider<MeterRegistry> meterRegistry) {
			Map<String, Object> application = producerFactory.getConfigurationProperties();
			if (application.isEmpty()) {
				throw new DuctorConfigurationException("The application's ProducerFactory ("
						+ producerFactory.getClass().getName() + ") does not expose its configuration "
						+ "(getConfigurationProperties() is empty), from which Ductor's Kafka relay derives its producer",
						"Define a DefaultKafkaProducerFactory (or let Spring Boot configure one from spring.kafka.*), "
								+ "or turn Ductor's Kafka outbox off with ductor.kafka.enabled=false");
			}
			DefaultKafkaProducerFactory<String, byte[]> relayFactory = new DefaultKafkaProducerFactory<>(
					RelayProducerConfig.of(application, properties.sendTimeout()));
			KafkaTemplate<String, byte[]> template = new KafkaTemplate<>(relayFactory);
			ObservationRegistry observations = observationRegistry.getIfUnique();
			if (observations != null) {
				template.setObservationEnabled(true);
				template.setObservationRegistry(observations);
			}
			MeterRegistry meters = meterRegistry.getIfUnique();
			return new KafkaRelay(template, codec.mapper(), properties.sendTimeout(),
					(meters != null) ? new MicrometerKafkaRelayMetrics(meters) : KafkaRelay.KafkaRelayMetrics.NONE);
		}

		@Bean
		@ConditionalOnMissingBean
		DurableKafka ductorDurableKafka(EffectOutbox outbox, JsonCodec codec) {
			return new DefaultDurableKafka(outbox, codec.mapper());
		}

	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass({ HealthIndicator.class, ConditionalOnEnabledHealthIndicator.class })
	// the outbox's conditions: the relay is declared in a sibling class, evaluated in no
	// set order
	@ConditionalOnBean({ EffectOutbox.class, JsonCodec.class, ProducerFactory.class, DataSource.class })
	@ConditionalOnBooleanProperty(name = "ductor.kafka.enabled", matchIfMissing = true)
	@ConditionalOnEnabledHealthIndicator("ductorKafka")
	@ConditionalOnBooleanProperty(name = "ductor.kafka.health.enabled", matchIfMissing = true)
	static class HealthConfiguration {

		@Bean
		@ConditionalOnMissingBean(name = "ductorKafkaHealthIndicator")
		KafkaRelayHealthIndicator ductorKafkaHealthIndicator(KafkaRelay relay, DataSource dataSource,
				DuctorKafkaProperties properties) {
			Map<String, Object> admin = new HashMap<>(relay.producerFactory().getConfigurationProperties());
			admin.keySet()
				.removeIf((name) -> ProducerConfig.configNames().contains(name)
						&& !org.apache.kafka.clients.admin.AdminClientConfig.configNames().contains(name));
			return new KafkaRelayHealthIndicator(admin, properties.health().timeout(), dataSource);
		}

	}

}
