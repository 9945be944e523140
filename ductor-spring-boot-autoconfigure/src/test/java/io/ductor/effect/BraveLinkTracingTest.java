package io.ductor.effect;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;

import javax.sql.DataSource;

import brave.handler.MutableSpan;
import brave.handler.SpanHandler;
import brave.propagation.TraceContext;
import io.micrometer.tracing.Tracer;
import io.micrometer.tracing.brave.bridge.BraveTracer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration;
import org.springframework.boot.micrometer.tracing.autoconfigure.MicrometerTracingAutoConfiguration;
import org.springframework.boot.micrometer.tracing.brave.autoconfigure.BraveAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import io.ductor.observation.autoconfigure.DuctorTracingAutoConfiguration;
import io.ductor.observation.internal.LinkingDispatchTracingObservationHandler;
import io.ductor.test.PostgresExtension;
import io.ductor.test.TestDatabase;
import io.ductor.test.TestDatabases;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Link mode ({@code ductor.effects.tracing.dispatch-relation=link}) with the tracer,
 * propagator and span handling that Spring Boot's Brave auto-configuration makes: every
 * attempt of an effect recorded in a span starts a trace of its own, with one link (Brave
 * keeps links as {@code links[i].*} tags) to that span.
 */
class BraveLinkTracingTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	private static final String[] SETTINGS = { "ductor.effects.drainer.poll-interval=100ms",
			"ductor.effects.drainer.concurrency=1", "ductor.effects.backoff.initial=20ms",
			"ductor.effects.backoff.max=50ms", "ductor.retention.enabled=false",
			"management.tracing.sampling.probability=1.0", "ductor.effects.tracing.dispatch-relation=link" };

	static final List<MutableSpan> finished = new CopyOnWriteArrayList<>();

	private TestDatabase database;

	@BeforeEach
	void setUp() {
		this.database = TestDatabases.create();
		finished.clear();
	}

	@AfterEach
	void tearDown() {
		TestDatabases.drop(this.database);
	}

	@Test
	void inLinkModeWithSpringBootsOwnBraveTracerEveryAttemptStartsATraceWithOneLink() {
		String key = "brave-" + UUID.randomUUID();
		TracedEffects.failures.put(key, 1);
		try (ConfigurableApplicationContext context = EffectInstances.start(this.database, BootBrave.class, SETTINGS)) {
			Tracer tracer = context.getBean(Tracer.class);
			assertThat(tracer).isInstanceOf(BraveTracer.class);
			assertThat(context.getBeansOfType(LinkingDispatchTracingObservationHandler.class)).hasSize(1);
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
				.until(() -> "completed"
					.equals(jdbc.sql("SELECT status FROM eec_effect_intent WHERE idempotency_key = ?")
						.param(key)
						.query(String.class)
						.optional()
						.orElse(null)));
			String producerTrace = request.context().traceId();
			assertThat(jdbc.sql("SELECT trace_context->>'traceparent' FROM eec_effect_intent WHERE idempotency_key = ?")
				.param(key)
				.query(String.class)
				.single()).contains(producerTrace);

			await().atMost(Duration.ofSeconds(5)).until(() -> dispatches(key).size() == 2);
			List<MutableSpan> dispatches = dispatches(key);
			assertThat(TracedEffects.traceIds.get(key)).hasSize(2).doesNotContain(producerTrace, "none");
			assertThat(dispatches).allSatisfy((dispatch) -> {
				assertThat(dispatch.traceId()).isNotEqualTo(producerTrace);
				assertThat(dispatch.parentId()).isNull();
				Map<String, String> tags = dispatch.tags();
				assertThat(tags).containsEntry("links[0].traceId", producerTrace)
					.containsEntry("links[0].spanId", request.context().spanId())
					.doesNotContainKey("links[1].traceId");
			});
			assertThat(dispatches).extracting(MutableSpan::traceId)
				.containsExactlyInAnyOrderElementsOf(TracedEffects.traceIds.get(key));
		}
	}

	private static List<MutableSpan> dispatches(String key) {
		return finished.stream()
			.filter((span) -> span.name() != null && span.name().startsWith("ductor dispatch traced"))
			.filter((span) -> key.equals(span.tag("ductor.key")))
			.toList();
	}

	/**
	 * Spring Boot's Brave tracing, tracer, propagator and its observation and tracing
	 * handlers, as an application with {@code spring-boot-micrometer-tracing-brave} has
	 * them; the test adds only a span handler that keeps the finished spans.
	 */
	@Configuration(proxyBeanMethods = false)
	@org.springframework.context.annotation.Import(TracedEffects.Config.class)
	@ImportAutoConfiguration({ ObservationAutoConfiguration.class, BraveAutoConfiguration.class,
			MicrometerTracingAutoConfiguration.class, DuctorTracingAutoConfiguration.class })
	static class BootBrave {

		@Bean
		SpanHandler keepingSpanHandler() {
			return new SpanHandler() {
				@Override
				public boolean end(TraceContext context, MutableSpan span, Cause cause) {
					if (cause == Cause.FINISHED) {
						finished.add(span);
					}
					return true;
				}
			};
		}

	}

}
