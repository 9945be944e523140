package io.ductor.autoconfigure;

import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration;

import io.ductor.actuate.autoconfigure.DuctorEndpointAutoConfiguration;
import io.ductor.actuate.internal.DuctorEndpoint;
import io.ductor.actuate.internal.DuctorEndpointWebExtension;
import io.ductor.effect.autoconfigure.DuctorEffectsAutoConfiguration;
import io.ductor.health.autoconfigure.DuctorHealthAutoConfiguration;
import io.ductor.health.internal.DuctorHealthIndicator;
import io.ductor.idempotency.autoconfigure.DuctorIdempotencyAutoConfiguration;
import io.ductor.metrics.autoconfigure.DuctorMetricsAutoConfiguration;
import io.ductor.metrics.internal.DuctorMetrics;
import io.ductor.metrics.internal.DuctorObserver;
import io.ductor.test.PostgresExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Metrics, health and the endpoint appear with their libraries, back off to user beans,
 * and turn off by property.
 */
class DuctorObservabilityAutoConfigurationTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class,
				DataSourceTransactionManagerAutoConfiguration.class, TransactionAutoConfiguration.class,
				JacksonAutoConfiguration.class, MetricsAutoConfiguration.class,
				CompositeMeterRegistryAutoConfiguration.class, SimpleMetricsExportAutoConfiguration.class,
				DuctorAutoConfiguration.class, DuctorEffectsAutoConfiguration.class,
				DuctorIdempotencyAutoConfiguration.class, DuctorMetricsAutoConfiguration.class,
				DuctorHealthAutoConfiguration.class, DuctorEndpointAutoConfiguration.class))
		.withPropertyValues(postgres.springProperties())
		.withPropertyValues("spring.datasource.hikari.maximum-pool-size=4", "ductor.effects.drainer.enabled=false");

	@Test
	void metricsRegisterDuctorsMetersWhenMicrometerIsPresent() {
		this.runner.run((context) -> {
			assertThat(context).hasNotFailed().hasSingleBean(DuctorMetrics.class);
			MeterRegistry registry = context.getBean(MeterRegistry.class);
			assertThat(registry.find("ductor.effects.backlog").gauge()).isNotNull();
			assertThat(registry.find("ductor.effects.oldest.age").gauge()).isNotNull();
			assertThat(registry.find("ductor.effects.parked").gauges()).hasSize(2);
			assertThat(registry.find("ductor.idempotency.pending").gauge()).isNotNull();
			assertThat(registry.get("ductor.effects.backlog").gauge().value()).isZero();
		});
	}

	@Test
	void lostLeasesAreCountedInOneCounterWithoutTags() {
		this.runner.run((context) -> {
			DuctorMetrics metrics = context.getBean(DuctorMetrics.class);
			metrics.drainerLeaseLost(2);
			metrics.drainerLeaseLost(1);
			MeterRegistry registry = context.getBean(MeterRegistry.class);
			assertThat(registry.get("ductor.drainer.lease.lost").counter().count()).isEqualTo(3);
			assertThat(registry.get("ductor.drainer.lease.lost").counter().getId().getTags()).isEmpty();
		});
	}

	@Test
	void metricsBackOffWithoutMicrometerByPropertyOrForAUserObserver() {
		new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class, JacksonAutoConfiguration.class,
					DuctorAutoConfiguration.class, DuctorMetricsAutoConfiguration.class))
			.withPropertyValues(postgres.springProperties())
			.withClassLoader(new FilteredClassLoader(MeterRegistry.class))
			.run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean(DuctorMetrics.class));
		this.runner.withPropertyValues("ductor.metrics.enabled=false")
			.run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean(DuctorMetrics.class));
		this.runner.withBean("myObserver", DuctorObserver.class, () -> new DuctorObserver() {
		}).run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean(DuctorMetrics.class));
	}

	@Test
	void theHealthContributorReportsTheBacklogAndWorkers() {
		this.runner.run((context) -> {
			assertThat(context).hasSingleBean(DuctorHealthIndicator.class);
			Health health = context.getBean(DuctorHealthIndicator.class).health(true);
			assertThat(health.getStatus().getCode()).isEqualTo("UP");
			assertThat(health.getDetails()).containsKeys("backlog", "workers");
		});
	}

	@Test
	void healthBacksOffWithoutTheHealthModuleByPropertyOrForAUserBean() {
		this.runner.withClassLoader(new FilteredClassLoader(HealthIndicator.class))
			.run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean(DuctorHealthIndicator.class));
		this.runner.withPropertyValues("management.health.ductor.enabled=false")
			.run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean(DuctorHealthIndicator.class));
		this.runner.withBean("ductorHealthIndicator", HealthIndicator.class, () -> () -> Health.up().build())
			.run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean(DuctorHealthIndicator.class));
	}

	@Test
	void theEndpointExistsOnlyWhenExposed() {
		this.runner.run((context) -> assertThat(context).doesNotHaveBean(DuctorEndpoint.class)
			.doesNotHaveBean(DuctorEndpointWebExtension.class));
		this.runner.withPropertyValues("management.endpoints.web.exposure.include=ductor")
			.run((context) -> assertThat(context).hasSingleBean(DuctorEndpoint.class)
				.hasSingleBean(DuctorEndpointWebExtension.class));
		this.runner.withPropertyValues("management.endpoints.jmx.exposure.include=ductor", "spring.jmx.enabled=true")
			.run((context) -> assertThat(context).doesNotHaveBean(DuctorEndpointWebExtension.class));
		this.runner.withPropertyValues("management.endpoints.web.exposure.include=ductor")
			.withClassLoader(new FilteredClassLoader(Endpoint.class))
			.run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean(DuctorEndpoint.class));
		this.runner.withPropertyValues("management.endpoints.web.exposure.include=ductor")
			.withBean("myEndpoint", DuctorEndpoint.class,
					() -> new DuctorEndpoint(null, null, null, java.util.List.of(), null,
							io.ductor.actuate.internal.PayloadMask.NONE, null))
			.run((context) -> assertThat(context).hasSingleBean(DuctorEndpoint.class).hasBean("myEndpoint"));
		this.runner
			.withPropertyValues("management.endpoints.web.exposure.include=ductor",
					"management.endpoint.ductor.access=NONE")
			.run((context) -> assertThat(context).doesNotHaveBean(DuctorEndpoint.class));
	}

	@Test
	void invalidHealthAndBacklogPropertiesFailStartUp() {
		this.runner.withPropertyValues("ductor.health.max-parked=-1").run((context) -> {
			assertThat(context).hasFailed();
			assertThat(DuctorAutoConfigurationTest.messages(context))
				.contains("ductor.health.max-parked must not be negative");
		});
		this.runner.withPropertyValues("ductor.backlog.count-limit=0").run((context) -> {
			assertThat(context).hasFailed();
			assertThat(DuctorAutoConfigurationTest.messages(context))
				.contains("ductor.backlog.count-limit must be between");
		});
	}

}
