package io.ductor.observation.autoconfigure;

import io.micrometer.observation.ObservationRegistry;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

import io.ductor.autoconfigure.DuctorAutoConfiguration;
import io.ductor.jdbc.internal.DuctorSchema;
import io.ductor.observation.DuctorObservationConvention;
import io.ductor.observation.internal.DuctorObservations;
import io.ductor.observation.internal.MicrometerDuctorObservations;

/**
 * Ductor's observations in the application's {@link ObservationRegistry}, when Micrometer's
 * observation API is present; with a convention bean, that convention names them. Without a
 * registry Ductor observes nothing.
 */
@AutoConfiguration(after = DuctorAutoConfiguration.class,
		afterName = "org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration")
@ConditionalOnClass(name = "io.micrometer.observation.ObservationRegistry")
@ConditionalOnBean(DuctorSchema.class)
public final class DuctorObservationAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	DuctorObservations ductorObservations(ObjectProvider<ObservationRegistry> registry,
			ObjectProvider<DuctorObservationConvention> convention) {
		ObservationRegistry available = registry.getIfUnique();
		return (available != null) ? new MicrometerDuctorObservations(available, convention.getIfUnique())
				: DuctorObservations.NOOP;
	}

}
