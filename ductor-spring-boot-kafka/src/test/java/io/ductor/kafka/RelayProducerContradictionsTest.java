package io.ductor.kafka;

import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.kafka.autoconfigure.KafkaAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import io.ductor.effect.EffectOutbox;
import io.ductor.json.internal.JsonCodec;
import io.ductor.kafka.autoconfigure.DuctorKafkaAutoConfiguration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A producer configuration the idempotent producer refuses (no retries, more than five
 * requests in flight) fails start-up naming the property, as {@code acks=1} does: the
 * relay's producer is made at the first send, where it would fail every attempt instead.
 */
class RelayProducerContradictionsTest {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(KafkaAutoConfiguration.class, DuctorKafkaAutoConfiguration.class))
		.withBean(EffectOutbox.class, () -> DuctorKafkaAutoConfigurationTest.OUTBOX)
		.withBean(JsonCodec.class, () -> new JsonCodec(JsonMapper.builder().build()));

	@Test
	void noRetriesFailsStartUpNamingTheProperty() {
		this.runner.withPropertyValues("spring.kafka.producer.retries=0")
			.run((context) -> assertThat(context).hasFailed().getFailure().rootCause().hasMessageContaining("retries"));
	}

	@Test
	void moreThanFiveRequestsInFlightFailsStartUpNamingTheProperty() {
		this.runner.withPropertyValues("spring.kafka.producer.properties.max.in.flight.requests.per.connection=6")
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.rootCause()
				.hasMessageContaining("max.in.flight.requests.per.connection"));
	}

}
