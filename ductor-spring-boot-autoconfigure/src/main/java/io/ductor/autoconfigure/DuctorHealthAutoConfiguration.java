package io.ductor.autoconfigure;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;

import io.ductor.effect.EffectDrainer;
import io.ductor.health.DuctorBacklog;
import io.ductor.health.DuctorHealthIndicator;
import io.ductor.worker.PeriodicWorker;

/**
 * The {@code ductor} health contributor, with Spring Boot's health module
 * ({@code management.health.ductor.enabled=false} turns it off).
 */
@AutoConfiguration(after = { DuctorAutoConfiguration.class, DuctorEffectsAutoConfiguration.class,
		DuctorIdempotencyAutoConfiguration.class })
@ConditionalOnClass({ HealthIndicator.class, ConditionalOnEnabledHealthIndicator.class })
@ConditionalOnBean(DuctorBacklog.class)
@ConditionalOnEnabledHealthIndicator("ductor")
public final class DuctorHealthAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean(name = "ductorHealthIndicator")
	DuctorHealthIndicator ductorHealthIndicator(DuctorBacklog backlog, ObjectProvider<PeriodicWorker> workers,
			ObjectProvider<EffectDrainer> drainer, DuctorProperties properties) {
		return new DuctorHealthIndicator(backlog, DuctorWorkers.statuses(workers, drainer),
				properties.health().maxOldestAge(), properties.health().maxParked());
	}

}
