package io.ductor.observation.internal;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.core.env.Environment;
import org.springframework.util.ClassUtils;

/**
 * Warns once at start-up when the application meant to trace but has no tracer: an
 * {@code ObservationRegistry} and Micrometer Tracing on the class path (a bridge was
 * added), tracing not switched off, and yet no {@code Tracer} bean. On Spring Boot 4 a
 * bridge alone is no longer enough; Boot's tracing module for it makes the tracer.
 * Without one, effects store no trace context, and their attempts do not continue the
 * request's trace.
 */
public final class TracingSetupCheck implements SmartInitializingSingleton {

	private static final Log logger = LogFactory.getLog(TracingSetupCheck.class);

	static final String TRACER = "io.micrometer.tracing.Tracer";

	static final String OTEL_BRIDGE = "io.micrometer.tracing.otel.bridge.OtelTracer";

	static final String BRAVE_BRIDGE = "io.micrometer.tracing.brave.bridge.BraveTracer";

	private final ListableBeanFactory beans;

	private final Environment environment;

	private final ClassLoader classLoader;

	public TracingSetupCheck(ListableBeanFactory beans, Environment environment, ClassLoader classLoader) {
		this.beans = beans;
		this.environment = environment;
		this.classLoader = classLoader;
	}

	@Override
	public void afterSingletonsInstantiated() {
		String problem = problem();
		if (problem != null) {
			logger.warn(problem);
		}
	}

	/**
	 * @return the warning, or {@code null} when tracing is set up or not wanted
	 */
	String problem() {
		if (!ClassUtils.isPresent(TRACER, this.classLoader)
				|| !this.environment.getProperty("management.tracing.enabled", Boolean.class, true)
				|| !this.environment.getProperty("management.observations.enable.ductor", Boolean.class, true)) {
			return null;
		}
		try {
			if (this.beans.getBeanNamesForType(ClassUtils.forName(TRACER, this.classLoader)).length > 0) {
				return null;
			}
		}
		catch (ClassNotFoundException | LinkageError ex) {
			return null;
		}
		String module;
		if (ClassUtils.isPresent(OTEL_BRIDGE, this.classLoader)) {
			module = "org.springframework.boot:spring-boot-starter-opentelemetry (or"
					+ " spring-boot-micrometer-tracing-opentelemetry beside micrometer-tracing-bridge-otel)";
		}
		else if (ClassUtils.isPresent(BRAVE_BRIDGE, this.classLoader)) {
			module = "org.springframework.boot:spring-boot-micrometer-tracing-brave (beside"
					+ " micrometer-tracing-bridge-brave)";
		}
		else {
			module = "org.springframework.boot:spring-boot-starter-opentelemetry, or"
					+ " spring-boot-micrometer-tracing-brave with micrometer-tracing-bridge-brave";
		}
		return "Micrometer Tracing is on the class path but the application has no Tracer bean: Ductor stores no"
				+ " trace context with the effects it records, and their attempts do not continue the trace of the"
				+ " request that recorded them. On Spring Boot 4 a tracing bridge alone makes no tracer; add " + module
				+ " (see Ductor's docs/tracing.md), or set management.tracing.enabled=false.";
	}

}
