package io.ductor.kafka;

import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.kafka.autoconfigure.KafkaAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.kafka.core.ProducerFactory;

import io.ductor.autoconfigure.internal.DuctorConfigurationException;
import io.ductor.effect.EffectOutbox;
import io.ductor.json.internal.JsonCodec;
import io.ductor.kafka.autoconfigure.DuctorKafkaAutoConfiguration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The relay derives its producer from the application's {@link ProducerFactory}: one that
 * does not expose its configuration (a factory of the application's own, whose
 * {@code getConfigurationProperties()} is empty) fails start-up saying so and what to do.
 * It used to start a relay on an empty configuration (no bootstrap servers, none of the
 * application's security), whose every send then failed.
 */
class RelayProducerFactoryChoiceTest {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(KafkaAutoConfiguration.class, DuctorKafkaAutoConfiguration.class))
		.withBean(EffectOutbox.class, () -> DuctorKafkaAutoConfigurationTest.OUTBOX)
		.withBean(JsonCodec.class, () -> new JsonCodec(JsonMapper.builder().build()));

	@Test
	void aProducerFactoryWithoutItsConfigurationFailsStartUpNamingTheWayOut() {
		ProducerFactory<Object, Object> own = () -> {
			throw new UnsupportedOperationException("not in this test");
		};
		this.runner.withBean("ownProducerFactory", ProducerFactory.class, () -> own)
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.rootCause()
				.hasMessageContaining("ProducerFactory")
				.isInstanceOfSatisfying(DuctorConfigurationException.class,
						(refused) -> assertThat(refused.action()).contains("ductor.kafka.enabled=false")));
	}

}
