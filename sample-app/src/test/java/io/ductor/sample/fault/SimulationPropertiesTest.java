package io.ductor.sample.fault;

import org.junit.jupiter.api.Test;

import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;

/** Bad simulation settings fail start-up with a message naming the property. */
class SimulationPropertiesTest {

	private final ApplicationContextRunner runner = new ApplicationContextRunner().withUserConfiguration(Config.class);

	@Test
	void defaultsAreWellBehavedReceivers() {
		this.runner.run((context) -> {
			SimulationProperties properties = context.getBean(SimulationProperties.class);
			assertThat(properties.gateway().failureRate()).isZero();
			assertThat(properties.mailer().latency()).isZero();
		});
	}

	@Test
	void failureRateAboveOneFailsStartUpNamingTheProperty() {
		this.runner.withPropertyValues("sample.gateway.failure-rate=1.5")
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.rootCause()
				.hasMessageContaining("sample.gateway.failure-rate must be between 0 and 1 but was 1.5"));
	}

	@Test
	void negativeLatencyFailsStartUpNamingTheProperty() {
		this.runner.withPropertyValues("sample.mailer.latency=-1s")
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.rootCause()
				.hasMessageContaining("sample.mailer.latency must not be negative"));
	}

	@Configuration(proxyBeanMethods = false)
	@EnableConfigurationProperties(SimulationProperties.class)
	static class Config {

	}

}
