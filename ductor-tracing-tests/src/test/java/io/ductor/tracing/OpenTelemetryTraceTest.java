package io.ductor.tracing;

import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * OpenTelemetry, with the dependencies of docs/tracing.md only (the module's other tracer
 * is left off this test's class path): one trace id from the request to the effect.
 */
@EnabledIfSystemProperty(named = "ductor.tracing.tracer", matches = "opentelemetry",
		disabledReason = "runs in the surefire execution whose class path has only this tracer")
class OpenTelemetryTraceTest extends TraceFromRequestToEffect {

	@Override
	int dependencyBlock() {
		return 0;
	}

	@Override
	String tracerClass() {
		return "OtelTracer";
	}

}
