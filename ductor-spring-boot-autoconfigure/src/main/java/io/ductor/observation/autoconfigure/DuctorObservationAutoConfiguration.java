package io.ductor.observation.autoconfigure;

import io.micrometer.observation.ObservationRegistry;

import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.ConfigurableBeanFactory;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;

import io.ductor.autoconfigure.DuctorAutoConfiguration;
import io.ductor.effect.autoconfigure.DuctorEffectsProperties;
import io.ductor.jdbc.internal.DuctorSchema;
import io.ductor.observation.DuctorObservationConvention;
import io.ductor.observation.internal.DuctorObservations;
import io.ductor.observation.internal.MicrometerDuctorObservations;
import io.ductor.observation.internal.TracingSetupCheck;
import io.ductor.observation.internal.TraceContextSource;

/**
 * Ductor's observations in the application's {@link ObservationRegistry}, when
 * Micrometer's observation API is present; with a convention bean, that convention names
 * them. Without a registry Ductor observes nothing. The trace context that a recording
 * stores when it is not observed ({@code ductor.effects.tracing.observe-recording=false},
 * the default) comes from the tracer's source ({@link DuctorTracingAutoConfiguration}),
 * when there is one.
 */
@AutoConfiguration(after = DuctorAutoConfiguration.class,
		afterName = "org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration")
@ConditionalOnClass(name = "io.micrometer.observation.ObservationRegistry")
@ConditionalOnBean(DuctorSchema.class)
public final class DuctorObservationAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	DuctorObservations ductorObservations(ObjectProvider<ObservationRegistry> registry,
			ObjectProvider<DuctorObservationConvention> convention, ObjectProvider<TraceContextSource> traceContexts,
			ObjectProvider<DuctorEffectsProperties> effects) {
		DuctorEffectsProperties effectsProperties = effects.getIfAvailable();
		ObservationRegistry available = registry.getIfUnique();
		return (available != null)
				? new MicrometerDuctorObservations(available, convention.getIfUnique(),
						traceContexts.getIfUnique(() -> TraceContextSource.NONE),
						effectsProperties != null && effectsProperties.tracing().observeRecording())
				: DuctorObservations.NOOP;
	}

	/**
	 * Warns at start-up when Micrometer Tracing is on the class path and yet no tracer
	 * was made (on Spring Boot 4 a bridge needs Boot's tracing module for it), so that
	 * effects would silently store no trace context.
	 */
	@Bean
	@ConditionalOnBean(ObservationRegistry.class)
	@ConditionalOnMissingBean
	TracingSetupCheck ductorTracingSetupCheck(ListableBeanFactory beans, Environment environment) {
		ClassLoader classLoader = (beans instanceof ConfigurableBeanFactory configurable
				&& configurable.getBeanClassLoader() != null) ? configurable.getBeanClassLoader()
						: DuctorObservationAutoConfiguration.class.getClassLoader();
		return new TracingSetupCheck(beans, environment, classLoader);
	}

}
