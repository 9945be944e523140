package io.ductor.observation.autoconfigure;

import io.micrometer.tracing.Tracer;
import io.micrometer.tracing.propagation.Propagator;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.core.annotation.Order;

import io.ductor.autoconfigure.DuctorAutoConfiguration;
import io.ductor.observation.internal.LinkingDispatchTracingObservationHandler;
import io.ductor.observation.internal.TraceContextSource;
import io.ductor.observation.internal.TracerTraceContextSource;

/**
 * Ductor with Micrometer Tracing, when a {@link Tracer} and a {@link Propagator} are
 * present: the source of the trace context that an effect recorded in a traced scope
 * stores with its intent, and, in link mode of the dispatch span
 * ({@code ductor.effects.tracing.dispatch-relation=link}), a tracing observation handler
 * of Ductor's, ordered before Spring Boot's receiver handler, that starts each dispatch
 * attempt's span in a new trace linked to the recording's span. In child mode (the
 * default) Spring Boot's handlers continue the recording's trace.
 */
@AutoConfiguration(after = DuctorAutoConfiguration.class,
		afterName = "org.springframework.boot.micrometer.tracing.autoconfigure.MicrometerTracingAutoConfiguration")
@ConditionalOnClass(name = { "io.micrometer.tracing.Tracer", "io.micrometer.observation.ObservationRegistry" })
@ConditionalOnBean({ Tracer.class, Propagator.class })
public final class DuctorTracingAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	TraceContextSource ductorTraceContextSource(Tracer tracer, Propagator propagator) {
		return new TracerTraceContextSource(tracer, propagator);
	}

	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnProperty(name = "ductor.effects.tracing.dispatch-relation", havingValue = "link")
	@Order(LinkingDispatchTracingObservationHandler.ORDER)
	LinkingDispatchTracingObservationHandler linkingDispatchTracingObservationHandler(Tracer tracer,
			Propagator propagator) {
		return new LinkingDispatchTracingObservationHandler(tracer, propagator);
	}

}
