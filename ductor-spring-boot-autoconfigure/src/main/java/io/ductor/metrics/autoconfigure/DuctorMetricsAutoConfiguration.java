package io.ductor.metrics.autoconfigure;

import java.util.ArrayList;
import java.util.TreeSet;

import io.micrometer.core.instrument.MeterRegistry;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;

import io.ductor.autoconfigure.DuctorAutoConfiguration;
import io.ductor.autoconfigure.DuctorProperties;
import io.ductor.effect.EffectOperations;
import io.ductor.effect.RecurringAlarms;
import io.ductor.effect.autoconfigure.DuctorConfiguredAlarms;
import io.ductor.effect.autoconfigure.DuctorEffectsAutoConfiguration;
import io.ductor.metrics.internal.DuctorBacklog;
import io.ductor.metrics.internal.DuctorMetrics;
import io.ductor.metrics.internal.DuctorObserver;
import io.ductor.metrics.internal.DuctorSchedulingMetrics;

/**
 * Ductor's Micrometer meters, when Micrometer and a {@link MeterRegistry} are present
 * ({@code ductor.metrics.enabled=false} turns them off).
 */
@AutoConfiguration(after = { DuctorAutoConfiguration.class, DuctorEffectsAutoConfiguration.class }, afterName = {
		"org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration",
		"org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration",
		"org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration" })
@ConditionalOnClass(MeterRegistry.class)
@ConditionalOnBean({ MeterRegistry.class, DuctorBacklog.class })
@ConditionalOnBooleanProperty(name = "ductor.metrics.enabled", matchIfMissing = true)
@EnableConfigurationProperties(DuctorMetricsProperties.class)
public final class DuctorMetricsAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean(DuctorObserver.class)
	DuctorMetrics ductorMetrics(DuctorBacklog backlog, MeterRegistry registry) {
		return new DuctorMetrics(backlog, registry);
	}

	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnBean({ EffectOperations.class, RecurringAlarms.class })
	DuctorSchedulingMetrics ductorSchedulingMetrics(EffectOperations operations, RecurringAlarms recurringAlarms,
			DuctorProperties properties, ObjectProvider<DuctorConfiguredAlarms> alarms) {
		DuctorConfiguredAlarms configured = alarms.getIfAvailable(() -> DuctorConfiguredAlarms.NONE);
		return new DuctorSchedulingMetrics(operations, recurringAlarms, properties.backlog().cacheTtl(),
				new ArrayList<>(new TreeSet<>(configured.byName().keySet())));
	}

}
