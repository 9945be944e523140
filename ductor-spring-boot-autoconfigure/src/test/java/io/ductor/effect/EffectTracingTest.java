package io.ductor.effect;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import javax.sql.DataSource;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.observation.DefaultMeterObservationHandler;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.tracing.Tracer;
import io.opentelemetry.sdk.trace.data.SpanData;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;

import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.test.web.servlet.setup.MockMvcBuilders;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.filter.ServerHttpObservationFilter;

import io.ductor.run.TickService;
import io.ductor.test.PostgresExtension;
import io.ductor.test.TestDatabase;
import io.ductor.test.TestDatabases;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.post;

/**
 * One trace from the HTTP request that records an effect, through the tick and the
 * commit, to every attempt of the effect on a drainer thread: on retries, and after a
 * crash on a fresh instance with a tracer of its own. Without a tracer nothing is stored.
 * The MDC names the attempt in the effect's own log lines.
 */
class EffectTracingTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	private static final String[] SETTINGS = { "ductor.effects.drainer.poll-interval=100ms",
			"ductor.effects.drainer.concurrency=1", "ductor.effects.backoff.initial=20ms",
			"ductor.effects.backoff.max=50ms", "ductor.effects.reconciler.interval=100ms",
			"ductor.retention.enabled=false" };

	private final ListAppender<ILoggingEvent> logs = new ListAppender<>();

	private TestDatabase database;

	@BeforeEach
	void setUp() {
		this.database = TestDatabases.create();
		TracedEffects.spans.reset();
		TracedEffects.reconciledIn.clear();
		this.logs.start();
	}

	@AfterEach
	void tearDown() {
		((Logger) LoggerFactory.getLogger(TracedEffects.class)).detachAppender(this.logs);
		TestDatabases.drop(this.database);
	}

	@Test
	void aRequestItsTickAndEveryAttemptOfItsEffectShareOneTrace() throws Exception {
		String order = "order-" + UUID.randomUUID();
		TracedEffects.failures.put(order, 1);
		try (ConfigurableApplicationContext context = start(SETTINGS)) {
			String requestTrace = placeOrder(context, order);
			// the tick ran on this thread: its MDC fields are gone with it
			assertThat(MDC.get("ductor.run")).isNull();

			JdbcClient jdbc = JdbcClient.create(context.getBean(DataSource.class));
			await().atMost(Duration.ofSeconds(20)).until(() -> "completed".equals(status(jdbc, order)));
			// the first attempt failed and was retried: both ran in the request's trace
			assertThat(TracedEffects.traceIds.get(order)).containsExactly(requestTrace, requestTrace);
			assertThat(jdbc.sql("SELECT trace_context->>'traceparent' FROM eec_effect_intent WHERE idempotency_key = ?")
				.param(order)
				.query(String.class)
				.single()).contains(requestTrace);

			await().atMost(Duration.ofSeconds(5))
				.until(() -> spans(requestTrace, "ductor dispatch traced").size() == 2);
			assertThat(spans(requestTrace, "http post")).hasSize(1);
			assertThat(spans(requestTrace, "ductor tick")).hasSize(1);
			// the recording is no span of its own: the intent stored the tick's context
			assertThat(spans(requestTrace, "ductor schedule")).isEmpty();
			SpanData tick = spans(requestTrace, "ductor tick").get(0);
			// each attempt is a child of the tick that recorded it, and names its intent
			// and attempt
			assertThat(spans(requestTrace, "ductor dispatch traced")).allSatisfy((dispatch) -> {
				assertThat(dispatch.getParentSpanId()).isEqualTo(tick.getSpanId());
				assertThat(dispatch.getAttributes().asMap().toString()).contains("ductor.key=" + order);
			});
			assertThat(spans(requestTrace, "ductor dispatch traced").stream()
				.map((span) -> span.getAttributes().asMap().toString())
				.filter((attributes) -> attributes.contains("outcome=retry"))).hasSize(1);

			// the effect's own log lines name the intent, effect, key, run and attempt;
			// never the payload
			long id = jdbc.sql("SELECT id FROM eec_effect_intent WHERE idempotency_key = ?")
				.param(order)
				.query(Long.class)
				.single();
			List<ILoggingEvent> lines = this.logs.list.stream()
				.filter((event) -> event.getFormattedMessage().equals("delivering " + order))
				.toList();
			assertThat(lines).hasSize(2);
			assertThat(lines).extracting((event) -> event.getMDCPropertyMap().get("ductor.attempt"))
				.containsExactly("1", "2");
			assertThat(lines).allSatisfy(
					(event) -> assertThat(event.getMDCPropertyMap()).containsEntry("ductor.intent", Long.toString(id))
						.containsEntry("ductor.effect", "traced")
						.containsEntry("ductor.key", order)
						.containsEntry("ductor.run", order)
						.doesNotContainValue("card-4242"));
			assertThat(lines).noneMatch((event) -> event.getThreadName().equals(Thread.currentThread().getName()));

			// the next attempt on the same drainer thread, of an intent no run recorded,
			// inherits nothing
			String plain = "plain-" + UUID.randomUUID();
			recordAndAwait(context, plain);
			ILoggingEvent next = this.logs.list.stream()
				.filter((event) -> event.getFormattedMessage().equals("delivering " + plain))
				.findFirst()
				.orElseThrow();
			assertThat(next.getThreadName()).isEqualTo(lines.get(1).getThreadName());
			assertThat(next.getMDCPropertyMap()).containsEntry("ductor.key", plain)
				.containsEntry("ductor.attempt", "1")
				.doesNotContainKey("ductor.run");
		}
	}

	@Test
	void withObserveRecordingEachRecordingIsASpanItsAttemptsAreChildrenOf() throws Exception {
		String order = "order-" + UUID.randomUUID();
		TracedEffects.failures.put(order, 1);
		try (ConfigurableApplicationContext context = start(
				concat(SETTINGS, "ductor.effects.tracing.observe-recording=true"))) {
			String requestTrace = placeOrder(context, order);
			JdbcClient jdbc = JdbcClient.create(context.getBean(DataSource.class));
			await().atMost(Duration.ofSeconds(20)).until(() -> "completed".equals(status(jdbc, order)));
			assertThat(TracedEffects.traceIds.get(order)).containsExactly(requestTrace, requestTrace);
			await().atMost(Duration.ofSeconds(5))
				.until(() -> spans(requestTrace, "ductor dispatch traced").size() == 2);
			SpanData tick = spans(requestTrace, "ductor tick").get(0);
			assertThat(spans(requestTrace, "ductor schedule traced")).singleElement()
				.satisfies((schedule) -> assertThat(schedule.getParentSpanId()).isEqualTo(tick.getSpanId()));
			SpanData schedule = spans(requestTrace, "ductor schedule traced").get(0);
			assertThat(spans(requestTrace, "ductor dispatch traced"))
				.allSatisfy((dispatch) -> assertThat(dispatch.getParentSpanId()).isEqualTo(schedule.getSpanId()));
		}
	}

	@Test
	void aReconciliationRoundContinuesTheIntentsStoredTrace() {
		String key = "mail-" + UUID.randomUUID();
		// the attempt throws at a receiver that cannot deduplicate: its reconciler is
		// asked
		TracedEffects.failures.put(key, 1);
		try (ConfigurableApplicationContext context = start(
				concat(SETTINGS, "ductor.effects.reconciliation.backoff.initial=20ms",
						"ductor.effects.reconciliation.backoff.max=50ms"))) {
			Tracer tracer = context.getBean(Tracer.class);
			TracedEffects effects = context.getBean(TracedEffects.class);
			io.micrometer.tracing.Span request = tracer.nextSpan().name("request").start();
			try (Tracer.SpanInScope scope = tracer.withSpan(request)) {
				new TransactionTemplate(context.getBean(PlatformTransactionManager.class))
					.executeWithoutResult((status) -> effects.mailed(key));
			}
			finally {
				request.end();
			}
			String trace = request.context().traceId();
			JdbcClient jdbc = JdbcClient.create(context.getBean(DataSource.class));
			await().atMost(Duration.ofSeconds(20)).until(() -> "completed".equals(status(jdbc, key)));
			assertThat(TracedEffects.traceIds.get(key)).containsExactly(trace);
			// the reconciler ran in the request's trace, in a span of its own beside the
			// attempt's
			assertThat(TracedEffects.reconciledIn.get(key)).containsExactly(trace);
			await().atMost(Duration.ofSeconds(5)).until(() -> spans(trace, "ductor reconcile traced.mail").size() == 1);
			SpanData round = spans(trace, "ductor reconcile traced.mail").get(0);
			assertThat(round.getParentSpanId()).isEqualTo(request.context().spanId());
			assertThat(round.getAttributes().asMap().toString()).contains("ductor.reconcile.round=1", "outcome=applied",
					"ductor.key=" + key, "ductor.attempt=1");
			assertThat(spans(trace, "ductor dispatch traced.mail")).singleElement()
				.satisfies((dispatch) -> assertThat(dispatch.getParentSpanId()).isEqualTo(request.context().spanId()));
			// the reconciler's log lines name the intent
			long id = jdbc.sql("SELECT id FROM eec_effect_intent WHERE idempotency_key = ?")
				.param(key)
				.query(Long.class)
				.single();
			assertThat(
					this.logs.list.stream().filter((event) -> event.getFormattedMessage().equals("reconciling " + key)))
				.singleElement()
				.satisfies((event) -> assertThat(event.getMDCPropertyMap())
					.containsEntry("ductor.intent", Long.toString(id))
					.containsEntry("ductor.effect", "traced.mail")
					.containsEntry("ductor.attempt", "1"));
		}
	}

	@Test
	void anEffectRecordedOutsideAnyTraceStoresNoContextAndEachAttemptStartsATrace() {
		String key = "untraced-" + UUID.randomUUID();
		TracedEffects.failures.put(key, 1);
		try (ConfigurableApplicationContext context = start(SETTINGS)) {
			recordAndAwait(context, key);
			JdbcClient jdbc = JdbcClient.create(context.getBean(DataSource.class));
			assertThat(jdbc
				.sql("SELECT count(*) FROM eec_effect_intent WHERE idempotency_key = ? AND trace_context IS NOT NULL")
				.param(key)
				.query(Long.class)
				.single()).isZero();
			List<String> traces = TracedEffects.traceIds.get(key);
			assertThat(traces).hasSize(2).doesNotContain("none");
			assertThat(traces.get(0)).isNotEqualTo(traces.get(1));
		}
	}

	@Test
	void anAttemptRedrivenAfterACrashOnAFreshInstanceKeepsTheTrace() throws Exception {
		String order = "order-" + UUID.randomUUID();
		String notAnObject = "order-" + UUID.randomUUID();
		String garbage = "order-" + UUID.randomUUID();
		String requestTrace;
		// the instance that records the intent crashes during its attempt (its lease is
		// left to expire)
		try (ConfigurableApplicationContext writer = start(
				concat(SETTINGS, "ductor.effects.drainer.enabled=false", "ductor.effects.reconciler.enabled=false"))) {
			requestTrace = placeOrder(writer, order);
			JdbcClient.create(writer.getBean(DataSource.class)).sql("""
					UPDATE eec_effect_intent SET status = 'in_flight', attempts = 1, lease_owner = 'crashed',
					    lease_expires_at = now() - interval '1 second'
					WHERE idempotency_key = ?""").param(order).update();
			// stored contexts that someone else wrote, or edited, badly
			placeOrder(writer, notAnObject);
			placeOrder(writer, garbage);
			JdbcClient jdbc = JdbcClient.create(writer.getBean(DataSource.class));
			jdbc.sql(
					"UPDATE eec_effect_intent SET trace_context = '[\"not\", \"an\", \"object\"]' WHERE idempotency_key = ?")
				.param(notAnObject)
				.update();
			jdbc.sql("UPDATE eec_effect_intent SET trace_context = '{\"traceparent\": \"00-zz-yy-01\", \"x\": 1}' "
					+ "WHERE idempotency_key = ?")
				.param(garbage)
				.update();
		}
		// another instance, with a tracer of its own, redrives and dispatches it
		try (ConfigurableApplicationContext restarted = start(SETTINGS)) {
			JdbcClient jdbc = JdbcClient.create(restarted.getBean(DataSource.class));
			await().atMost(Duration.ofSeconds(20)).until(() -> "completed".equals(status(jdbc, order)));
			assertThat(TracedEffects.traceIds.get(order)).containsExactly(requestTrace);
			await().atMost(Duration.ofSeconds(5))
				.until(() -> spans(requestTrace, "ductor dispatch traced").size() == 1);
			// an unreadable context costs its trace, never its attempt: it runs in a
			// fresh trace
			await().atMost(Duration.ofSeconds(20))
				.until(() -> "completed".equals(status(jdbc, notAnObject))
						&& "completed".equals(status(jdbc, garbage)));
			assertThat(TracedEffects.traceIds.get(notAnObject)).singleElement().isNotIn("none", requestTrace);
			assertThat(TracedEffects.traceIds.get(garbage)).singleElement().isNotIn("none", requestTrace);
		}
	}

	@Test
	void withoutATracerNothingIsStoredAndEffectsRun() {
		String plain = "plain-" + UUID.randomUUID();
		String metered = "metered-" + UUID.randomUUID();
		// no observation registry at all
		try (ConfigurableApplicationContext context = EffectInstances.start(this.database, TracedEffects.Config.class,
				SETTINGS)) {
			recordAndAwait(context, plain);
		}
		// a registry that only makes meters: timers, but no trace context to store
		try (ConfigurableApplicationContext context = EffectInstances.start(this.database, Metered.class, SETTINGS)) {
			recordAndAwait(context, metered);
			MeterRegistry meters = context.getBean(MeterRegistry.class);
			assertThat(meters.get("ductor.effect.dispatch")
				.tags("effect", "traced", "outcome", "completed", "receiver", "IDEMPOTENT")
				.timer()
				.count()).isEqualTo(1);
			// a recording is no observation of its own unless the application asks for
			// one
			assertThat(meters.find("ductor.effect.schedule").timer()).isNull();
		}
		String observed = "observed-" + UUID.randomUUID();
		try (ConfigurableApplicationContext context = EffectInstances.start(this.database, Metered.class,
				concat(SETTINGS, "ductor.effects.tracing.observe-recording=true"))) {
			recordAndAwait(context, observed);
			assertThat(context.getBean(MeterRegistry.class)
				.get("ductor.effect.schedule")
				.tags("outcome", "recorded")
				.timer()
				.count()).isEqualTo(1);
		}
		try (com.zaxxer.hikari.HikariDataSource dataSource = this.database.newDataSource(1)) {
			assertThat(JdbcClient.create(dataSource)
				.sql("SELECT count(*) FROM eec_effect_intent WHERE trace_context IS NOT NULL")
				.query(Long.class)
				.single()).isZero();
		}
		assertThat(TracedEffects.traceIds.get(plain)).containsExactly("none");
		assertThat(TracedEffects.traceIds.get(metered)).containsExactly("none");
		assertThat(TracedEffects.traceIds.get(observed)).containsExactly("none");
	}

	private void recordAndAwait(ConfigurableApplicationContext context, String key) {
		TracedEffects effects = context.getBean(TracedEffects.class);
		new TransactionTemplate(context.getBean(PlatformTransactionManager.class))
			.executeWithoutResult((status) -> effects.traced(key, "card-4242"));
		JdbcClient jdbc = JdbcClient.create(context.getBean(DataSource.class));
		await().atMost(Duration.ofSeconds(20)).until(() -> "completed".equals(status(jdbc, key)));
	}

	private ConfigurableApplicationContext start(String... settings) {
		ConfigurableApplicationContext context = EffectInstances.start(this.database, Traced.class, settings);
		// after the start: the logging system is initialised by it
		((Logger) LoggerFactory.getLogger(TracedEffects.class)).addAppender(this.logs);
		return context;
	}

	/**
	 * Sends the request that starts the order's run and ticks it; returns the request's
	 * trace id.
	 */
	private static String placeOrder(ConfigurableApplicationContext context, String order) throws Exception {
		MockMvc mvc = MockMvcBuilders.standaloneSetup(context.getBean(OrderController.class))
			.addFilters(new ServerHttpObservationFilter(context.getBean(ObservationRegistry.class)))
			.build();
		return mvc.perform(post("/orders/" + order)).andReturn().getResponse().getContentAsString();
	}

	private static List<SpanData> spans(String traceId, String name) {
		return TracedEffects.spans.getFinishedSpanItems()
			.stream()
			.filter((span) -> span.getTraceId().equals(traceId) && span.getName().startsWith(name))
			.toList();
	}

	private static String status(JdbcClient jdbc, String key) {
		return jdbc.sql("SELECT status FROM eec_effect_intent WHERE idempotency_key = ?")
			.param(key)
			.query(String.class)
			.optional()
			.orElse(null);
	}

	private static String[] concat(String[] first, String... more) {
		String[] all = java.util.Arrays.copyOf(first, first.length + more.length);
		System.arraycopy(more, 0, all, first.length, more.length);
		return all;
	}

	/** An order's state. */
	public record Placed(boolean placed) {
	}

	@RestController
	static class OrderController {

		private final TickService ticks;

		private final TracedEffects effects;

		private final Tracer tracer;

		OrderController(TickService ticks, TracedEffects effects, Tracer tracer) {
			this.ticks = ticks;
			this.effects = effects;
			this.tracer = tracer;
		}

		@PostMapping("/orders/{id}")
		String place(@PathVariable String id) {
			this.ticks.start("order", id, new Placed(false));
			this.ticks.tick(id, "place", Placed.class, (state, tick) -> {
				this.effects.traced(id, "card-4242");
				return new Placed(true);
			});
			return this.tracer.currentSpan().context().traceId();
		}

	}

	@Configuration(proxyBeanMethods = false)
	@org.springframework.context.annotation.Import({ TracedEffects.Config.class, TracedEffects.Tracing.class,
			OrderController.class })
	@org.springframework.boot.autoconfigure.ImportAutoConfiguration(io.ductor.observation.autoconfigure.DuctorTracingAutoConfiguration.class)
	static class Traced {

	}

	@Configuration(proxyBeanMethods = false)
	@org.springframework.context.annotation.Import(TracedEffects.Config.class)
	static class Metered {

		@Bean
		SimpleMeterRegistry meterRegistry() {
			return new SimpleMeterRegistry();
		}

		@Bean
		ObservationRegistry observationRegistry(MeterRegistry meters) {
			ObservationRegistry registry = ObservationRegistry.create();
			registry.observationConfig().observationHandler(new DefaultMeterObservationHandler(meters));
			return registry;
		}

	}

}
