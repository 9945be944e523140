package io.ductor.kafka;

import java.time.Duration;
import java.util.Map;

import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.kafka.autoconfigure.KafkaAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.kafka.core.KafkaTemplate;

import io.ductor.effect.EffectOutbox;
import io.ductor.effect.EffectRequest;
import io.ductor.json.internal.JsonCodec;
import io.ductor.kafka.autoconfigure.DuctorKafkaAutoConfiguration;
import io.ductor.kafka.autoconfigure.DuctorKafkaProperties;
import io.ductor.kafka.internal.KafkaRelay;

import static org.assertj.core.api.Assertions.assertThat;

class DuctorKafkaAutoConfigurationTest {

	/** Records nothing: these tests look at which beans exist, not at what they do. */
	static final EffectOutbox OUTBOX = new EffectOutbox() {

		@Override
		public String schedule(EffectRequest request) {
			throw new UnsupportedOperationException();
		}

		@Override
		public void compensateWith(String key, EffectRequest compensation) {
			throw new UnsupportedOperationException();
		}

		@Override
		public String scheduleAlarm(String alarmName, Duration delay, EffectRequest request) {
			throw new UnsupportedOperationException();
		}

		@Override
		public boolean cancelAlarm(String alarmName) {
			throw new UnsupportedOperationException();
		}

	};

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(KafkaAutoConfiguration.class, DuctorKafkaAutoConfiguration.class))
		.withBean(EffectOutbox.class, () -> OUTBOX)
		.withBean(JsonCodec.class, () -> new JsonCodec(JsonMapper.builder().build()));

	@Test
	void withSpringKafkaAndDuctorsEffectsTheOutboxAndItsRelayAreThere() {
		this.runner.run((context) -> {
			assertThat(context).hasSingleBean(DurableKafka.class).hasSingleBean(KafkaRelay.class);
			Map<String, Object> config = context.getBean(KafkaRelay.class)
				.producerFactory()
				.getConfigurationProperties();
			assertThat(config).containsEntry("acks", "all").containsEntry("enable.idempotence", true);
			assertThat(context.getBean(DuctorKafkaProperties.class).sendTimeout()).isEqualTo(Duration.ofSeconds(30));
			// the application's KafkaTemplate stays the only one
			assertThat(context).hasSingleBean(KafkaTemplate.class);
		});
	}

	@Test
	void anApplicationsOwnDurableKafkaWins() {
		DurableKafka own = new DurableKafka() {

			@Override
			public String send(String topic, String key, Object payload, Map<String, String> headers) {
				return "own";
			}

			@Override
			public String send(String idempotencyKey, String topic, String key, Object payload,
					Map<String, String> headers) {
				return idempotencyKey;
			}

		};
		this.runner.withBean(DurableKafka.class, () -> own)
			.run((context) -> assertThat(context.getBean(DurableKafka.class)).isSameAs(own));
	}

	@Test
	void withoutSpringKafkaThereIsNothingOfIt() {
		this.runner.withClassLoader(new FilteredClassLoader(KafkaTemplate.class))
			.run((context) -> assertThat(context).hasNotFailed()
				.doesNotHaveBean(DurableKafka.class)
				.doesNotHaveBean(KafkaRelay.class));
	}

	@Test
	void withoutDuctorsEffectsThereIsNoOutbox() {
		new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(KafkaAutoConfiguration.class, DuctorKafkaAutoConfiguration.class))
			.run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean(DurableKafka.class));
	}

	@Test
	void turnedOffByProperty() {
		this.runner.withPropertyValues("ductor.kafka.enabled=false")
			.run((context) -> assertThat(context).hasNotFailed()
				.doesNotHaveBean(DurableKafka.class)
				.doesNotHaveBean(KafkaRelay.class));
	}

	@Test
	void aSendTimeoutThatIsNotPositiveFailsStartUpNamingTheProperty() {
		this.runner.withPropertyValues("ductor.kafka.send-timeout=0s")
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.rootCause()
				.hasMessageContaining("ductor.kafka.send-timeout"));
	}

	@Test
	void aProducerWithFewerAcknowledgementsFailsStartUpNamingTheProperty() {
		this.runner.withPropertyValues("spring.kafka.producer.acks=1")
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.rootCause()
				.hasMessageContaining("spring.kafka.producer.acks")
				.hasMessageContaining("acks=all"));
	}

	@Test
	void aProducerWithoutIdempotenceFailsStartUpNamingTheProperty() {
		this.runner.withPropertyValues("spring.kafka.producer.properties.enable.idempotence=false")
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.rootCause()
				.hasMessageContaining("spring.kafka.producer.properties.enable.idempotence"));
	}

	@Test
	void theRelaysProducerGivesUpOnARecordNoLaterThanTheSendTimeoutUnlessTheApplicationSaysOtherwise() {
		this.runner.withPropertyValues("ductor.kafka.send-timeout=45s").run((context) -> {
			Map<String, Object> config = context.getBean(KafkaRelay.class)
				.producerFactory()
				.getConfigurationProperties();
			assertThat(config).containsEntry("max.block.ms", 45_000L).containsEntry("delivery.timeout.ms", 45_000);
		});
	}

}
