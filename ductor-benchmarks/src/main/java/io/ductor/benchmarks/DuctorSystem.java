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
import io.ductor.autoconfigure.DuctorEffectsAutoConfiguration;
import io.ductor.autoconfigure.DuctorIdempotencyAutoConfiguration;
import io.ductor.effect.DurableEffect;
import io.ductor.worker.PeriodicWorker;

/**
 * Ductor as an application runs it, default settings, in one of two {@link Shape}s: the headline
 * effect called from a {@code @Transactional} method of an application with the full
 * auto-configuration, or the minimal no-op effect on Ductor's outbox auto-configurations only.
 * Several instances on one database share the producers round-robin and all drain.
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
						(shape == Shape.HEADLINE) ? FullApplication.class : Infrastructure.class, db, probe, properties);
				this.instances.add(new Instance(context, context.getBean(NoOpEffect.class),
						(shape == Shape.HEADLINE) ? context.getBean(Publisher.class) : null,
						new TransactionTemplate(context.getBean(PlatformTransactionManager.class)),
						JdbcClient.create(context.getBean(DataSource.class))));
			}
		}
		catch (RuntimeException ex) {
			close();
			throw ex;
		}
	}

	/** Extra properties of every instance, from {@code --ductor.*} options. */
	static volatile List<String> extraProperties = List.of();

	static OutboxSystem.Kind kind(Shape shape, int instances) {
		return new OutboxSystem.Kind((instances == 1) ? "Ductor" : "Ductor x" + instances,
				(db, probe) -> new DuctorSystem(shape, db, probe, instances));
	}

	/** Start one Ductor application on {@code db}, its effect reporting to {@code probe}. */
	static ConfigurableApplicationContext start(Db db, Probe probe, String... properties) {
		return start(Infrastructure.class, db, probe, properties);
	}

	/** {@code spring.autoconfigure.exclude} for every Spring Modulith auto-configuration on the classpath. */
	static String excludeModulith() {
		List<String> modulith = new ArrayList<>();
		for (String name : ImportCandidates.load(AutoConfiguration.class, DuctorSystem.class.getClassLoader())) {
			if (name.startsWith("org.springframework.modulith")) {
				modulith.add(name);
			}
		}
		return "spring.autoconfigure.exclude=" + String.join(",", modulith);
	}

	/**
	 * Start one Ductor application with ingress idempotency as well ({@code IdempotencyService}
	 * from its auto-configuration); the outbox scenarios leave it out, so no sweeper runs there.
	 */
	static ConfigurableApplicationContext startWithIdempotency(Db db, Probe probe, String... properties) {
		return start(WithIdempotency.class, db, probe, properties);
	}

	private static ConfigurableApplicationContext start(Class<?> source, Db db, Probe probe, String... properties) {
		List<String> all = new ArrayList<>(List.of(db.datasourceProperties(POOL_SIZE)));
		all.add("spring.main.banner-mode=off");
		all.add("spring.main.log-startup-info=false");
		if (source == FullApplication.class) {
			all.add(excludeModulith());
			all.add("management.endpoints.access.default=none");
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
			instance.publisher().publish(seq, Shape.body(seq));
			return;
		}
		instance.tx().executeWithoutResult((status) -> {
			this.probe.producing(seq);
			instance.effect().run(seq);
			this.probe.beforeCommit(seq, instance.jdbc());
		});
	}

	@Override
	public long completedInDatabase() {
		return jdbc().sql("SELECT count(*) FROM eec_effect_intent WHERE status = 'completed'").query(Long.class).single();
	}

	@Override
	public void close() {
		this.instances.forEach((instance) -> instance.context().close());
	}

	/** Started just before Ductor's workers: the moment a cold drainer begins. */
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
			return PeriodicWorker.PHASE - 1;
		}

		long startedNanos() {
			return this.startedNanos;
		}

	}

	private record Instance(ConfigurableApplicationContext context, NoOpEffect effect, Publisher publisher,
			TransactionTemplate tx, JdbcClient jdbc) {
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

	/** The headline effect: a key expression, three arguments, a short string among them. */
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

	/** The application's service that calls the headline effect in its own transaction. */
	public static class Publisher {

		private final HandleEffect effect;

		private final Probe probe;

		private final JdbcClient jdbc;

		Publisher(HandleEffect effect, Probe probe, DataSource dataSource) {
			this.effect = effect;
			this.probe = probe;
			this.jdbc = JdbcClient.create(dataSource);
		}

		@Transactional
		public void publish(long seq, String body) {
			this.probe.producing((int) seq);
			this.effect.handle(seq, Shape.KIND, body);
			this.probe.beforeCommit((int) seq, this.jdbc);
		}

	}

	/**
	 * An application with the full auto-configuration of this classpath (Ductor's, Boot's, the
	 * actuator's metrics and health), except Spring Modulith's, which only its own system uses.
	 */
	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	static class FullApplication {

		@Bean
		NoOpEffect noOpEffect(Probe benchmarkProbe) {
			return new NoOpEffect(benchmarkProbe);
		}

		@Bean
		HandleEffect handleEffect(Probe benchmarkProbe) {
			return new HandleEffect(benchmarkProbe);
		}

		@Bean
		Publisher publisher(HandleEffect handleEffect, Probe benchmarkProbe, DataSource dataSource) {
			return new Publisher(handleEffect, benchmarkProbe, dataSource);
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
