package io.ductor.effect;

import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.tracing.Span;
import io.micrometer.tracing.Tracer;
import io.micrometer.tracing.handler.DefaultTracingObservationHandler;
import io.micrometer.tracing.handler.PropagatingReceiverTracingObservationHandler;
import io.micrometer.tracing.handler.PropagatingSenderTracingObservationHandler;
import io.micrometer.tracing.otel.bridge.OtelBaggageManager;
import io.micrometer.tracing.otel.bridge.OtelCurrentTraceContext;
import io.micrometer.tracing.otel.bridge.OtelPropagator;
import io.micrometer.tracing.otel.bridge.OtelTracer;
import io.micrometer.tracing.propagation.Propagator;
import io.opentelemetry.api.baggage.propagation.W3CBaggagePropagator;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.propagation.ContextPropagators;
import io.opentelemetry.context.propagation.TextMapPropagator;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Effects that note the trace they run in and log a line, and a real tracer (Micrometer
 * Tracing's OpenTelemetry bridge, exporting to memory) wired into an observation registry
 * as Spring Boot wires it: propagating sender and receiver handlers before the default
 * one.
 */
public class TracedEffects {

	static final Logger logger = LoggerFactory.getLogger(TracedEffects.class);

	/** Every finished span, of every context the tests start. */
	static final InMemorySpanExporter spans = InMemorySpanExporter.create();

	/** The trace id each attempt of an effect ran in, by key. */
	static final Map<String, List<String>> traceIds = new ConcurrentHashMap<>();

	/** How many more attempts of a key fail. */
	static final Map<String, Integer> failures = new ConcurrentHashMap<>();

	private final ObjectProvider<Tracer> tracer;

	public TracedEffects(ObjectProvider<Tracer> tracer) {
		this.tracer = tracer;
	}

	@DurableEffect(name = "traced", key = "#key", maxAttempts = 3)
	public void traced(String key, String secret) {
		Tracer available = this.tracer.getIfAvailable();
		Span span = (available != null) ? available.currentSpan() : null;
		traceIds.computeIfAbsent(key, (k) -> new CopyOnWriteArrayList<>())
			.add((span != null) ? span.context().traceId() : "none");
		logger.info("delivering {}", key);
		if (failures.merge(key, -1, Integer::sum) >= 0) {
			throw new IllegalStateException("receiver unavailable");
		}
	}

	/** The trace id each reconciliation round of an effect ran in, by key. */
	static final Map<String, List<String>> reconciledIn = new ConcurrentHashMap<>();

	/**
	 * A receiver that cannot deduplicate: an attempt that throws leaves its outcome
	 * unknown, for {@link #wasMailed} to settle.
	 */
	@DurableEffect(name = "traced.mail", key = "#key", receiver = Receiver.NOT_IDEMPOTENT, maxAttempts = 3)
	public void mailed(String key) {
		traced(key, "card-4242");
	}

	@EffectReconciler("traced.mail")
	public ReconcileOutcome wasMailed(String key) {
		reconciledIn.computeIfAbsent(key, (k) -> new CopyOnWriteArrayList<>()).add(currentTraceId());
		logger.info("reconciling {}", key);
		return ReconcileOutcome.APPLIED;
	}

	private String currentTraceId() {
		Tracer available = this.tracer.getIfAvailable();
		Span span = (available != null) ? available.currentSpan() : null;
		return (span != null) ? span.context().traceId() : "none";
	}

	@Configuration(proxyBeanMethods = false)
	static class Config {

		@Bean
		TracedEffects tracedEffects(ObjectProvider<Tracer> tracer) {
			return new TracedEffects(tracer);
		}

	}

	/**
	 * Exports to {@link #spans}, which outlives the tracer of every context (a closed
	 * tracer shuts its exporter).
	 */
	static final class KeptOpen implements SpanExporter {

		@Override
		public CompletableResultCode export(Collection<SpanData> batch) {
			return spans.export(batch);
		}

		@Override
		public CompletableResultCode flush() {
			return CompletableResultCode.ofSuccess();
		}

		@Override
		public CompletableResultCode shutdown() {
			return CompletableResultCode.ofSuccess();
		}

	}

	/**
	 * An OpenTelemetry SDK exporting to {@link #spans}, and Micrometer's tracer and
	 * propagator over it: a tracer of its own per context, as a fresh JVM would have.
	 */
	@Configuration(proxyBeanMethods = false)
	static class Otel {

		@Bean(destroyMethod = "close")
		OpenTelemetrySdk openTelemetry() {
			return OpenTelemetrySdk.builder()
				.setTracerProvider(SdkTracerProvider.builder()
					.addSpanProcessor(SimpleSpanProcessor.create(new KeptOpen()))
					.build())
				.setPropagators(ContextPropagators.create(TextMapPropagator
					.composite(W3CTraceContextPropagator.getInstance(), W3CBaggagePropagator.getInstance())))
				.build();
		}

		@Bean
		OtelTracer tracer(OpenTelemetrySdk openTelemetry) {
			OtelCurrentTraceContext current = new OtelCurrentTraceContext();
			return new OtelTracer(openTelemetry.getTracer("test"), current, (event) -> {
			}, new OtelBaggageManager(current, List.of(), List.of()));
		}

		@Bean
		Propagator propagator(OpenTelemetrySdk openTelemetry, OtelTracer tracer) {
			return new OtelPropagator(openTelemetry.getPropagators(), openTelemetry.getTracer("test"));
		}

	}

	/** {@link Otel} with an observation registry of its own and the tracing handlers. */
	@Configuration(proxyBeanMethods = false)
	@org.springframework.context.annotation.Import(Otel.class)
	static class Tracing {

		@Bean
		ObservationRegistry observationRegistry(OtelTracer tracer, Propagator propagator) {
			ObservationRegistry registry = ObservationRegistry.create();
			registry.observationConfig()
				.observationHandler(new ObservationHandler.FirstMatchingCompositeObservationHandler(
						new PropagatingSenderTracingObservationHandler<>(tracer, propagator),
						new PropagatingReceiverTracingObservationHandler<>(tracer, propagator),
						new DefaultTracingObservationHandler(tracer)));
			return registry;
		}

	}

}
