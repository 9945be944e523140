package io.ductor.benchmarks;

import java.util.ArrayList;
import java.util.List;

import javax.sql.DataSource;

import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.context.annotation.ImportCandidates;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.SmartLifecycle;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.transaction.support.TransactionTemplate;

import io.ductor.autoconfigure.DuctorAutoConfiguration;
import io.ductor.effect.autoconfigure.DuctorEffectsAutoConfiguration;
import io.ductor.idempotency.autoconfigure.DuctorIdempotencyAutoConfiguration;
import io.ductor.effect.DurableEffect;

/**
 * Ductor as an application runs it, default settings, in one of two {@link Shape}s: the
 * headline effect called from a {@code @Transactional} method of an application with the
 * full auto-configuration, or the minimal no-op effect on Ductor's outbox
 * auto-configurations only. Several instances on one database share the producers
 * round-robin and all drain.
 */
final class DuctorSystem implements OutboxSystem {

	static final int POOL_SIZE = 12;

	private final List<Instance> instances = new ArrayList<>();

	private final Probe probe;

	private final Shape shape;

	DuctorSystem(Db db, Probe probe, int instances, String... properties) {
		this(Shape.MINIMAL, db, probe, instances, properties);
	}

	DuctorSystem(Shape shape, Db db, Probe probe, int instances, String... properties) {
		this.probe = probe;
		this.shape = shape;
		try {
			for (int i = 0; i < instances; i++) {
				ConfigurableApplicationContext context = start(
						(shape == Shape.HEADLINE) ? FullApplication.class : Infrastructure.class, db, probe,
						properties);
				this.instances.add(new Instance(context, context.getBean(NoOpEffect.class),
						(shape == Shape.HEADLINE) ? context.getBean(Publisher.class) : null,
						new TransactionTemplate(context.getBean(PlatformTransactionManager.class)),
						JdbcClient.create(context.getBean(DataSource.class)), requests(context)));
			}
		}
		catch (RuntimeException ex) {
			close();
			throw ex;
		}
	}

	/**
	 * The property that turns tracing on in a {@link Shape#HEADLINE} instance: Boot's
	 * OpenTelemetry tracing, every trace sampled, spans exported to
	 * {@link CountingSpanExporter}. Without it the tracing auto-configuration is excluded
	 * (observations still make meters).
	 */
	static final String TRACING_ON = "benchmark.tracing=on";

	private static final String TRACING_AUTO_CONFIGURATION = "org.springframework.boot.micrometer.tracing.opentelemetry.autoconfigure.OpenTelemetryTracingAutoConfiguration";

	/**
	 * The property that makes each call of a {@link Shape#HEADLINE} producer an observed
	 * request ({@code benchmark.request}), as an HTTP request or a message listener of a
	 * Boot application is: with a tracer, its span is current while the effect is
	 * recorded.
	 */
	static final String REQUESTS_OBSERVED = "benchmark.requests=observed";

	/** How each call of a producer runs: in an observation of its own, or as it is. */
	private static java.util.function.Consumer<Runnable> requests(ConfigurableApplicationContext context) {
		io.micrometer.observation.ObservationRegistry registry = context
			.getBeanProvider(io.micrometer.observation.ObservationRegistry.class)
			.getIfUnique();
		if (registry == null || !"observed".equals(context.getEnvironment().getProperty("benchmark.requests"))) {
			return Runnable::run;
		}
		return (call) -> io.micrometer.observation.Observation.createNotStarted("benchmark.request", registry)
			.observe(call);
	}

	/**
	 * Scenario 1t: the headline shape with tracing off, each producer call an observed
	 * request.
	 */
	static OutboxSystem.Kind untraced() {
		return new OutboxSystem.Kind("Ductor, tracing off",
				(db, probe) -> new DuctorSystem(Shape.HEADLINE, db, probe, 1, REQUESTS_OBSERVED));
	}

	/**
	 * Scenario 1t: the headline shape with tracing on, each producer call an observed
	 * request.
	 */
	static OutboxSystem.Kind traced() {
		return new OutboxSystem.Kind("Ductor, tracing on", (db, probe) -> new DuctorSystem(Shape.HEADLINE, db, probe, 1,
				REQUESTS_OBSERVED, TRACING_ON, "management.tracing.sampling.probability=1.0"));
	}

	/**
	 * Scenario 1t: tracing on as in {@link #traced()}, every recording an observation of
	 * its own ({@code ductor.effects.tracing.observe-recording=true}): a span and a timer
	 * per recording, as every recording was before the option.
	 */
	static OutboxSystem.Kind tracedObservingRecordings() {
		return new OutboxSystem.Kind("Ductor, tracing on, every recording observed",
				(db, probe) -> new DuctorSystem(Shape.HEADLINE, db, probe, 1, REQUESTS_OBSERVED, TRACING_ON,
						"management.tracing.sampling.probability=1.0",
						"ductor.effects.tracing.observe-recording=true"));
	}

	/**
	 * Scenario 1t with Spring Boot's default sampling (one trace in ten): what a
	 * production application that keeps Boot's default has. Unsampled requests still
	 * propagate their context, so every intent still stores one.
	 */
	static OutboxSystem.Kind tracedAtDefaultSampling() {
		return new OutboxSystem.Kind("Ductor, tracing on, 10 % sampled", (db, probe) -> new DuctorSystem(Shape.HEADLINE,
				db, probe, 1, REQUESTS_OBSERVED, TRACING_ON, "management.tracing.sampling.probability=0.1"));
	}

	/**
	 * Scenario 1t's third system: tracing on as in {@link #traced()}, Ductor's own
	 * observations off, so nothing of Ductor is traced and no trace context is stored:
	 * what the tracer costs the rest of the application.
	 */
	static OutboxSystem.Kind tracedWithoutDuctorObservations() {
		return new OutboxSystem.Kind("Ductor, tracing on, Ductor's observations off",
				(db, probe) -> new DuctorSystem(Shape.HEADLINE, db, probe, 1, REQUESTS_OBSERVED, TRACING_ON,
						"management.tracing.sampling.probability=1.0", "management.observations.enable.ductor=false"));
	}

	/** Extra properties of every instance, from {@code --ductor.*} options. */
	static volatile List<String> extraProperties = List.of();

	static OutboxSystem.Kind kind(Shape shape, int instances) {
		return new OutboxSystem.Kind((instances == 1) ? "Ductor" : "Ductor x" + instances,
				(db, probe) -> new DuctorSystem(shape, db, probe, instances));
	}

	/**
	 * Start one Ductor application on {@code db}, its effect reporting to {@code probe}.
	 */
	static ConfigurableApplicationContext start(Db db, Probe probe, String... properties) {
		return start(Infrastructure.class, db, probe, properties);
	}

	/**
	 * {@code spring.autoconfigure.exclude} for every Spring Modulith auto-configuration
	 * on the classpath, Ductor's for Modulith included.
	 */
	static String excludeModulith() {
		List<String> modulith = new ArrayList<>();
		for (String name : ImportCandidates.load(AutoConfiguration.class, DuctorSystem.class.getClassLoader())) {
			if (name.startsWith("org.springframework.modulith") || name.startsWith("io.ductor.modulith")) {
				modulith.add(name);
			}
		}
		return "spring.autoconfigure.exclude=" + String.join(",", modulith);
	}

	/**
	 * Start one Ductor application with ingress idempotency as well
	 * ({@code IdempotencyService} from its auto-configuration); the outbox scenarios
	 * leave it out, so no sweeper runs there.
	 */
	static ConfigurableApplicationContext startWithIdempotency(Db db, Probe probe, String... properties) {
		return start(WithIdempotency.class, db, probe, properties);
	}

	private static ConfigurableApplicationContext start(Class<?> source, Db db, Probe probe, String... properties) {
		List<String> all = new ArrayList<>(List.of(db.datasourceProperties(POOL_SIZE)));
		all.add("spring.main.banner-mode=off");
		all.add("spring.main.log-startup-info=false");
		if (source == FullApplication.class) {
			all.add(excludeModulith()
					+ (List.of(properties).contains(TRACING_ON) ? "" : "," + TRACING_AUTO_CONFIGURATION));
			all.add("management.endpoints.access.default=none");
			// the Kafka and RabbitMQ outboxes are on this class path for scenarios 11 and
			// 12 only
			all.add("ductor.kafka.enabled=false");
			all.add("ductor.amqp.enabled=false");
			all.add("management.health.rabbit.enabled=false");
		}
		all.addAll(extraProperties);
		all.addAll(List.of(properties));
		return new SpringApplicationBuilder(source).web(WebApplicationType.NONE)
			.properties(all.toArray(String[]::new))
			.initializers((context) -> {
				context.getBeanFactory().registerSingleton("benchmarkProbe", probe);
				context.getBeanFactory().registerSingleton("benchmarkStartMarker", new StartMarker());
			})
			.run();
	}

	ConfigurableApplicationContext context(int index) {
		return this.instances.get(index).context();
	}

	JdbcClient jdbc() {
		return this.instances.get(0).jdbc();
	}

	@Override
	public void produce(int seq) {
		Instance instance = this.instances.get(seq % this.instances.size());
		if (this.shape == Shape.HEADLINE) {
			instance.requests().accept(() -> instance.publisher().publish(seq, Shape.body(seq)));
			return;
		}
		instance.tx().executeWithoutResult((status) -> {
			this.probe.producing(seq);
			instance.effect().run(seq);
		});
	}

	@Override
	public long completedInDatabase() {
		return jdbc().sql("SELECT count(*) FROM eec_effect_intent WHERE status = 'completed'")
			.query(Long.class)
			.single();
	}

	/**
	 * Completion is {@code finished_at}, the start of the completing transaction; the
	 * start is {@code created_at}, the start of the producer's.
	 */
	@Override
	public String lagSql() {
		return "SELECT (payload->>0)::int, extract(epoch FROM finished_at - created_at) * 1000 FROM eec_effect_intent";
	}

	@Override
	public void close() {
		this.instances.forEach((instance) -> instance.context().close());
	}

	/**
	 * Started in the first lifecycle phase, so before Ductor's workers, which start in a
	 * later one: the moment a cold drainer begins.
	 */
	static final class StartMarker implements SmartLifecycle {

		private volatile long startedNanos;

		private volatile boolean running;

		@Override
		public void start() {
			this.startedNanos = System.nanoTime();
			this.running = true;
		}

		@Override
		public void stop() {
			this.running = false;
		}

		@Override
		public boolean isRunning() {
			return this.running;
		}

		@Override
		public int getPhase() {
			return Integer.MIN_VALUE;
		}

		long startedNanos() {
			return this.startedNanos;
		}

	}

	/**
	 * Where the traced instance's spans go: counted, as cheaply as an exporter can be.
	 */
	static final class CountingSpanExporter implements io.opentelemetry.sdk.trace.export.SpanExporter {

		final java.util.concurrent.atomic.LongAdder spans = new java.util.concurrent.atomic.LongAdder();

		@Override
		public io.opentelemetry.sdk.common.CompletableResultCode export(
				java.util.Collection<io.opentelemetry.sdk.trace.data.SpanData> batch) {
			this.spans.add(batch.size());
			return io.opentelemetry.sdk.common.CompletableResultCode.ofSuccess();
		}

		@Override
		public io.opentelemetry.sdk.common.CompletableResultCode flush() {
			return io.opentelemetry.sdk.common.CompletableResultCode.ofSuccess();
		}

		@Override
		public io.opentelemetry.sdk.common.CompletableResultCode shutdown() {
			return io.opentelemetry.sdk.common.CompletableResultCode.ofSuccess();
		}

	}

	private record Instance(ConfigurableApplicationContext context, NoOpEffect effect, Publisher publisher,
			TransactionTemplate tx, JdbcClient jdbc, java.util.function.Consumer<Runnable> requests) {
	}

	/** The effect under test: it does nothing but tell the probe it ran. */
	public static class NoOpEffect {

		private final Probe probe;

		NoOpEffect(Probe probe) {
			this.probe = probe;
		}

		@DurableEffect(name = "bench.noop")
		public void run(long seq) {
			this.probe.dispatched(seq);
		}

	}

	/**
	 * The headline effect: a key expression, three arguments, a short string among them.
	 */
	public static class HandleEffect {

		private final Probe probe;

		HandleEffect(Probe probe) {
			this.probe = probe;
		}

		@DurableEffect(name = "bench.handle", key = "'bench:' + #seq")
		public void handle(long seq, String kind, String body) {
			this.probe.dispatched(seq);
		}

	}

	/**
	 * The application's service that calls the headline effect in its own transaction.
	 */
	public static class Publisher {

		private final HandleEffect effect;

		private final Probe probe;

		Publisher(HandleEffect effect, Probe probe) {
			this.effect = effect;
			this.probe = probe;
		}

		@Transactional
		public void publish(long seq, String body) {
			this.probe.producing((int) seq);
			this.effect.handle(seq, Shape.KIND, body);
		}

	}

	/**
	 * An application with the full auto-configuration of this classpath (Ductor's,
	 * Boot's, the actuator's metrics and health), except Spring Modulith's, which only
	 * its own system uses.
	 */
	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	static class FullApplication {

		@Bean
		@org.springframework.boot.autoconfigure.condition.ConditionalOnProperty(name = "benchmark.tracing",
				havingValue = "on")
		CountingSpanExporter countingSpanExporter() {
			return new CountingSpanExporter();
		}

		@Bean
		NoOpEffect noOpEffect(Probe benchmarkProbe) {
			return new NoOpEffect(benchmarkProbe);
		}

		@Bean
		HandleEffect handleEffect(Probe benchmarkProbe) {
			return new HandleEffect(benchmarkProbe);
		}

		@Bean
		Publisher publisher(HandleEffect handleEffect, Probe benchmarkProbe) {
			return new Publisher(handleEffect, benchmarkProbe);
		}

	}

	@Configuration(proxyBeanMethods = false)
	@ImportAutoConfiguration({ DataSourceAutoConfiguration.class, DataSourceTransactionManagerAutoConfiguration.class,
			TransactionAutoConfiguration.class, JacksonAutoConfiguration.class, DuctorAutoConfiguration.class,
			DuctorEffectsAutoConfiguration.class })
	static class Infrastructure {

		@Bean
		NoOpEffect noOpEffect(Probe benchmarkProbe) {
			return new NoOpEffect(benchmarkProbe);
		}

	}

	@Configuration(proxyBeanMethods = false)
	@Import(Infrastructure.class)
	@ImportAutoConfiguration(DuctorIdempotencyAutoConfiguration.class)
	static class WithIdempotency {

	}

}
