package io.ductor.effect;

import java.time.Duration;
import java.util.List;
import java.util.UUID;

import javax.sql.DataSource;

import io.micrometer.observation.ObservationRegistry;
import io.micrometer.tracing.TraceContext;
import io.micrometer.tracing.Tracer;
import io.micrometer.tracing.otel.bridge.OtelBaggageManager;
import io.micrometer.tracing.otel.bridge.OtelCurrentTraceContext;
import io.micrometer.tracing.otel.bridge.OtelPropagator;
import io.micrometer.tracing.otel.bridge.OtelTracer;
import io.micrometer.tracing.propagation.Propagator;
import io.opentelemetry.api.baggage.propagation.W3CBaggagePropagator;
import io.opentelemetry.api.trace.SpanId;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.propagation.ContextPropagators;
import io.opentelemetry.context.propagation.TextMapPropagator;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.LinkData;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration;
import org.springframework.boot.micrometer.tracing.autoconfigure.MicrometerTracingAutoConfiguration;
import org.springframework.boot.micrometer.tracing.opentelemetry.autoconfigure.OpenTelemetryTracingAutoConfiguration;
import org.springframework.boot.opentelemetry.autoconfigure.OpenTelemetrySdkAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import io.ductor.observation.autoconfigure.DuctorTracingAutoConfiguration;
import io.ductor.test.PostgresExtension;
import io.ductor.test.TestDatabase;
import io.ductor.test.TestDatabases;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * {@code ductor.effects.tracing.dispatch-relation} with Spring Boot's own observation and
 * tracing auto-configuration and a real OpenTelemetry tracer: in child mode every attempt
 * continues the recording's trace; in link mode every attempt starts a trace of its own
 * with a span link to the recording's span; a value that is neither fails the start,
 * naming the property. Spring Boot's {@code management.observations.enable.ductor=false}
 * turns all of Ductor's observations off.
 */
class DispatchRelationTracingTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	private static final String[] SETTINGS = { "ductor.effects.drainer.poll-interval=100ms",
			"ductor.effects.drainer.concurrency=1", "ductor.effects.backoff.initial=20ms",
			"ductor.effects.backoff.max=50ms", "ductor.retention.enabled=false",
			"management.tracing.sampling.probability=1.0",
			"management.opentelemetry.tracing.export.schedule-delay=100ms" };

	private TestDatabase database;

	@BeforeEach
	void setUp() {
		this.database = TestDatabases.create();
		TracedEffects.spans.reset();
	}

	@AfterEach
	void tearDown() {
		TestDatabases.drop(this.database);
	}

	@Test
	void inLinkModeEveryAttemptStartsATraceLinkedToTheRecording() {
		assertLinked(BootTracing.class);
	}

	/**
	 * Link mode with the tracer, propagator and span processing that Spring Boot's
	 * OpenTelemetry tracing auto-configuration makes (no tracer bean of the test's own):
	 * one link per attempt.
	 */
	@Test
	void inLinkModeWithSpringBootsOwnOpenTelemetryTracerEveryAttemptStartsATraceWithOneLink() {
		try (ConfigurableApplicationContext context = assertLinked(BootOpenTelemetry.class)) {
			assertThat(context.getBean(Tracer.class)).isInstanceOf(OtelTracer.class);
			assertThat(context.getBeansOfType(OpenTelemetrySdk.class)).hasSize(1);
			assertThat(context
				.getBeansOfType(io.ductor.observation.internal.LinkingDispatchTracingObservationHandler.class))
				.hasSize(1);
		}
	}

	/**
	 * Records an effect that fails once in a span; both attempts start traces linked to
	 * that span.
	 */
	private ConfigurableApplicationContext assertLinked(Class<?> tracing) {
		String key = "link-" + UUID.randomUUID();
		TracedEffects.failures.put(key, 1);
		ConfigurableApplicationContext context = EffectInstances.start(this.database, tracing,
				concat(SETTINGS, "ductor.effects.tracing.dispatch-relation=link"));
		try {
			TraceContext producer = recordInASpan(context, key);
			List<SpanData> dispatches = awaitDispatches(key, 2);

			assertThat(TracedEffects.traceIds.get(key)).hasSize(2).doesNotContain(producer.traceId(), "none");
			assertThat(dispatches).allSatisfy((dispatch) -> {
				assertThat(dispatch.getTraceId()).isNotEqualTo(producer.traceId());
				assertThat(dispatch.getParentSpanId()).isEqualTo(SpanId.getInvalid());
				assertThat(dispatch.getLinks()).extracting(LinkData::getSpanContext)
					.singleElement()
					.satisfies((linked) -> {
						assertThat(linked.getTraceId()).isEqualTo(producer.traceId());
						assertThat(linked.getSpanId()).isEqualTo(producer.spanId());
					});
			});
			// the effect ran in the attempt's own trace
			assertThat(dispatches).extracting(SpanData::getTraceId)
				.containsExactlyInAnyOrderElementsOf(TracedEffects.traceIds.get(key));
			return context;
		}
		catch (RuntimeException | AssertionError ex) {
			context.close();
			throw ex;
		}
	}

	@Test
	void inChildModeTheDefaultEveryAttemptContinuesTheRecordingsTrace() {
		String key = "child-" + UUID.randomUUID();
		TracedEffects.failures.put(key, 1);
		try (ConfigurableApplicationContext context = EffectInstances.start(this.database, BootTracing.class,
				SETTINGS)) {
			assertThat(context
				.getBeansOfType(io.ductor.observation.internal.LinkingDispatchTracingObservationHandler.class))
				.isEmpty();
			TraceContext producer = recordInASpan(context, key);
			List<SpanData> dispatches = awaitDispatches(key, 2);

			assertThat(TracedEffects.traceIds.get(key)).containsExactly(producer.traceId(), producer.traceId());
			assertThat(dispatches).allSatisfy((dispatch) -> {
				assertThat(dispatch.getTraceId()).isEqualTo(producer.traceId());
				assertThat(dispatch.getParentSpanId()).isEqualTo(producer.spanId());
				assertThat(dispatch.getLinks()).isEmpty();
			});
		}
	}

	@Test
	void springBootsPropertyTurnsDuctorsObservationsOffAndNothingIsStored() {
		String key = "off-" + UUID.randomUUID();
		try (ConfigurableApplicationContext context = EffectInstances.start(this.database, BootTracing.class,
				concat(SETTINGS, "management.observations.enable.ductor=false"))) {
			recordInASpan(context, key);
			JdbcClient jdbc = JdbcClient.create(context.getBean(DataSource.class));
			assertThat(jdbc.sql("SELECT count(*) FROM eec_effect_intent WHERE trace_context IS NOT NULL")
				.query(Long.class)
				.single()).isZero();
			assertThat(TracedEffects.traceIds.get(key)).containsExactly("none");
			assertThat(TracedEffects.spans.getFinishedSpanItems()).extracting(SpanData::getName)
				.noneMatch((name) -> name.startsWith("ductor"));
		}
	}

	@Test
	void aRelationThatIsNeitherFailsTheStartNamingTheProperty() {
		assertThatThrownBy(() -> EffectInstances
			.start(this.database, BootTracing.class,
					concat(SETTINGS, "ductor.effects.tracing.dispatch-relation=sibling"))
			.close()).hasStackTraceContaining("ductor.effects.tracing.dispatch-relation");
	}

	/**
	 * Records the effect inside a span of the application's tracer; returns that span's
	 * context.
	 */
	private static TraceContext recordInASpan(ConfigurableApplicationContext context, String key) {
		Tracer tracer = context.getBean(Tracer.class);
		TracedEffects effects = context.getBean(TracedEffects.class);
		io.micrometer.tracing.Span request = tracer.nextSpan().name("request").start();
		try (Tracer.SpanInScope scope = tracer.withSpan(request)) {
			new TransactionTemplate(context.getBean(PlatformTransactionManager.class))
				.executeWithoutResult((status) -> effects.traced(key, "card-4242"));
		}
		finally {
			request.end();
		}
		JdbcClient jdbc = JdbcClient.create(context.getBean(DataSource.class));
		await().atMost(Duration.ofSeconds(20))
			.until(() -> "completed".equals(jdbc.sql("SELECT status FROM eec_effect_intent WHERE idempotency_key = ?")
				.param(key)
				.query(String.class)
				.optional()
				.orElse(null)));
		return request.context();
	}

	private static List<SpanData> awaitDispatches(String key, int count) {
		await().atMost(Duration.ofSeconds(5)).until(() -> dispatches(key).size() == count);
		return dispatches(key);
	}

	private static List<SpanData> dispatches(String key) {
		return named("ductor dispatch traced").stream()
			.filter((span) -> span.getAttributes().asMap().toString().contains("ductor.key=" + key))
			.toList();
	}

	private static List<SpanData> named(String name) {
		return TracedEffects.spans.getFinishedSpanItems()
			.stream()
			.filter((span) -> span.getName().startsWith(name))
			.toList();
	}

	private static String[] concat(String[] first, String... more) {
		String[] all = java.util.Arrays.copyOf(first, first.length + more.length);
		System.arraycopy(more, 0, all, first.length, more.length);
		return all;
	}

	/**
	 * A tracer of its own, and Spring Boot's observation registry and tracing handlers
	 * around it, as an application with {@code micrometer-tracing-bridge-otel} has them.
	 */
	@Configuration(proxyBeanMethods = false)
	@org.springframework.context.annotation.Import({ TracedEffects.Config.class, TracedEffects.Otel.class })
	@ImportAutoConfiguration({ ObservationAutoConfiguration.class, MicrometerTracingAutoConfiguration.class,
			DuctorTracingAutoConfiguration.class })
	static class BootTracing {

	}

	/**
	 * Spring Boot's OpenTelemetry SDK, tracer and propagator, and its observation and
	 * tracing handlers, as an application with
	 * {@code spring-boot-micrometer-tracing-opentelemetry} has them; the test adds only a
	 * span exporter, which Boot's span processor picks up.
	 */
	@Configuration(proxyBeanMethods = false)
	@org.springframework.context.annotation.Import(TracedEffects.Config.class)
	@ImportAutoConfiguration({ ObservationAutoConfiguration.class, OpenTelemetrySdkAutoConfiguration.class,
			OpenTelemetryTracingAutoConfiguration.class, MicrometerTracingAutoConfiguration.class,
			DuctorTracingAutoConfiguration.class })
	static class BootOpenTelemetry {

		@Bean
		TracedEffects.KeptOpen spanExporter() {
			return new TracedEffects.KeptOpen();
		}

	}

}
