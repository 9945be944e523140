package io.ductor.health.autoconfigure;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;

import io.ductor.autoconfigure.DuctorAutoConfiguration;
import io.ductor.effect.autoconfigure.DuctorEffectsAutoConfiguration;
import io.ductor.health.internal.DuctorHealthIndicator;
import io.ductor.idempotency.autoconfigure.DuctorIdempotencyAutoConfiguration;
import io.ductor.metrics.internal.DuctorBacklog;
import io.ductor.worker.internal.DuctorWorkers;

/**
 * The {@code ductor} health contributor, with Spring Boot's health module
 * ({@code management.health.ductor.enabled=false} turns it off), configured by
 * {@link DuctorHealthProperties} ({@code ductor.health.*}).
 */
@AutoConfiguration(after = { DuctorAutoConfiguration.class, DuctorEffectsAutoConfiguration.class,
		DuctorIdempotencyAutoConfiguration.class })
@ConditionalOnClass({ HealthIndicator.class, ConditionalOnEnabledHealthIndicator.class })
@ConditionalOnBean(DuctorBacklog.class)
@ConditionalOnEnabledHealthIndicator("ductor")
@EnableConfigurationProperties(DuctorHealthProperties.class)
public final class DuctorHealthAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean(name = "ductorHealthIndicator")
	DuctorHealthIndicator ductorHealthIndicator(DuctorBacklog backlog, DuctorWorkers workers,
			DuctorHealthProperties properties) {
		return new DuctorHealthIndicator(backlog, workers.statuses(), properties.maxOldestAge(),
				properties.maxParked());
	}

}
