package io.ductor.tracing;

import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import io.ductor.test.PostgresExtension;

/**
 * OpenTelemetry, with the dependencies of docs/tracing.md only (the module's other tracer
 * is left off this test's class path): one trace id from the request to the effect.
 */
@SpringBootTest(classes = TracedShop.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "management.tracing.sampling.probability=1.0", "management.otlp.metrics.export.enabled=false" })
@EnabledIfSystemProperty(named = "ductor.tracing.tracer", matches = "opentelemetry",
		disabledReason = "runs in the surefire execution whose class path has only this tracer")
class OpenTelemetryTraceTest extends TraceFromRequestToEffect {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	@DynamicPropertySource
	static void database(DynamicPropertyRegistry registry) {
		registry.add("spring.datasource.url", postgres::jdbcUrl);
		registry.add("spring.datasource.username", postgres::username);
		registry.add("spring.datasource.password", () -> (postgres.password() != null) ? postgres.password() : "");
	}

	@Override
	int dependencyBlock() {
		return 0;
	}

	@Override
	String tracerClass() {
		return "OtelTracer";
	}

}
