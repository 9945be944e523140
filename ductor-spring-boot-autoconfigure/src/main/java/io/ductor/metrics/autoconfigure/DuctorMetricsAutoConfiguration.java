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
import io.ductor.effect.autoconfigure.DuctorConfiguredAlarms;
import io.ductor.effect.autoconfigure.DuctorEffectsAutoConfiguration;
import io.ductor.effect.internal.EffectSlots;
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

	/**
	 * The slot and alarm gauges, read as the drainer and the alarm scheduler read them
	 * (not through the application's {@code EffectOperations} or {@code RecurringAlarms},
	 * which may be its own).
	 */
	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnBean({ EffectSlots.class, io.ductor.effect.internal.RecurringAlarms.class })
	DuctorSchedulingMetrics ductorSchedulingMetrics(EffectSlots slots,
			io.ductor.effect.internal.RecurringAlarms recurringAlarms, DuctorProperties properties,
			ObjectProvider<DuctorConfiguredAlarms> alarms) {
		DuctorConfiguredAlarms configured = alarms.getIfAvailable(() -> DuctorConfiguredAlarms.NONE);
		return new DuctorSchedulingMetrics(slots::limits, slots::concurrency, recurringAlarms::list,
				properties.backlog().cacheTtl(), new ArrayList<>(new TreeSet<>(configured.byName().keySet())));
	}

}
