package io.ductor.autoconfigure;

import java.util.ArrayList;
import java.util.TreeSet;

import io.micrometer.core.instrument.MeterRegistry;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

import io.ductor.effect.EffectOutbox;
import io.ductor.health.DuctorBacklog;
import io.ductor.metrics.DuctorMetrics;
import io.ductor.metrics.DuctorObserver;
import io.ductor.metrics.DuctorSchedulingMetrics;

/**
 * Ductor's Micrometer meters, when Micrometer and a {@link MeterRegistry} are present.
 */
@AutoConfiguration(after = DuctorAutoConfiguration.class,
		afterName = { "org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration",
				"org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration",
				"org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration" })
@ConditionalOnClass(MeterRegistry.class)
@ConditionalOnBean({ MeterRegistry.class, DuctorBacklog.class })
@ConditionalOnBooleanProperty(name = "ductor.metrics.enabled", matchIfMissing = true)
public final class DuctorMetricsAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean(DuctorObserver.class)
	DuctorMetrics ductorMetrics(DuctorBacklog backlog, MeterRegistry registry) {
		return new DuctorMetrics(backlog, registry);
	}

	@Bean
	@ConditionalOnMissingBean
	DuctorSchedulingMetrics ductorSchedulingMetrics(ObjectProvider<EffectOutbox> outbox, DuctorProperties properties) {
		EffectOutbox effects = outbox.getIfAvailable();
		if (effects == null) {
			return null;
		}
		return new DuctorSchedulingMetrics(effects, properties.backlog().cacheTtl(),
				new ArrayList<>(new TreeSet<>(properties.alarms().keySet())));
	}

}
