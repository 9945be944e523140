package io.ductor.benchmarks;

import java.util.ArrayList;
import java.util.List;

import javax.sql.DataSource;

import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
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
import org.springframework.transaction.support.TransactionTemplate;

import io.ductor.autoconfigure.DuctorAutoConfiguration;
import io.ductor.autoconfigure.DuctorEffectsAutoConfiguration;
import io.ductor.autoconfigure.DuctorIdempotencyAutoConfiguration;
import io.ductor.effect.DurableEffect;
import io.ductor.worker.PeriodicWorker;

/**
 * Ductor as an application runs it: its auto-configurations, default settings, a no-op
 * {@code @DurableEffect} called inside the producer's transaction. Several instances on one
 * database share the producers round-robin and all drain.
 */
final class DuctorSystem implements OutboxSystem {

	static final int POOL_SIZE = 12;

	private final List<Instance> instances = new ArrayList<>();

	private final Probe probe;

	DuctorSystem(Db db, Probe probe, int instances, String... properties) {
		this.probe = probe;
		try {
			for (int i = 0; i < instances; i++) {
				ConfigurableApplicationContext context = start(db, probe, properties);
				this.instances.add(new Instance(context, context.getBean(NoOpEffect.class),
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

	static OutboxSystem.Kind kind(int instances) {
		return new OutboxSystem.Kind((instances == 1) ? "Ductor" : "Ductor x" + instances,
				(db, probe) -> new DuctorSystem(db, probe, instances));
	}

	/** Start one Ductor application on {@code db}, its effect reporting to {@code probe}. */
	static ConfigurableApplicationContext start(Db db, Probe probe, String... properties) {
		return start(Infrastructure.class, db, probe, properties);
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

	private record Instance(ConfigurableApplicationContext context, NoOpEffect effect, TransactionTemplate tx,
			JdbcClient jdbc) {
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
