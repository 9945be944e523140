package io.ductor.benchmarks;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.transaction.support.TransactionTemplate;

import io.ductor.autoconfigure.DuctorAutoConfiguration;
import io.ductor.effect.DurableEffect;
import io.ductor.effect.EffectContext;
import io.ductor.effect.autoconfigure.DuctorEffectsAutoConfiguration;

/**
 * Scenario 8b: how long an unlimited effect waits beside a backlog of a
 * concurrency-limited one. One instance with the drainer's defaults (8 threads, batches
 * of 100, so it holds up to 208 intents) starts on {@code --backlog} intents (100,000) of
 * an effect whose call takes {@value #SLOW_MILLIS} ms, all due, and one producer commits
 * an unlimited no-op effect {@value #RATE} times a second for {@code --lag-seconds}.
 * Measured: commit to dispatch of the unlimited effect (JVM clock), p50 and p99, alone
 * and beside the backlog limited to {@value #LOW_LIMIT} (fewer than the drainer holds)
 * and to {@value #HIGH_LIMIT} (more than it holds: it is full of limited intents), the
 * last also with dispatch at commit off, so that every unlimited intent is recorded
 * pending and claimed beside the backlog rather than handed over at commit.
 */
final class LimitedBacklogLagScenario {

	static final int RATE = 50;

	static final int SLOW_MILLIS = 20;

	static final int LOW_LIMIT = 3;

	static final int HIGH_LIMIT = 500;

	private static final String SCENARIO = "8b unlimited lag beside a limited backlog";

	private final Bench bench;

	LimitedBacklogLagScenario(Bench bench) {
		this.bench = bench;
	}

	void run() {
		Bench.progress("scenario 8b: an unlimited effect's lag beside a limited backlog");
		int backlog = this.bench.options.backlog();
		List<Variant> systems = List.of(new Variant(0, true), new Variant(LOW_LIMIT, true),
				new Variant(HIGH_LIMIT, true), new Variant(HIGH_LIMIT, false));
		Map<Variant, List<double[]>> figures = new LinkedHashMap<>();
		systems.forEach((variant) -> figures.put(variant, new ArrayList<>()));
		this.bench.alternate("limited backlog lag", systems, (variant) -> variant.name(backlog),
				this.bench.options.trials(), (variant) -> {
					double[] trial = this.bench.withDatabase((db) -> trial(db, variant, backlog));
					figures.get(variant).add(trial);
					return trial[0];
				});
		double alone = Stats.median(figures.get(systems.get(0)).stream().map((f) -> f[0]).toList());
		for (Variant variant : systems) {
			List<double[]> trials = figures.get(variant);
			Report.Row p50 = this.bench.report.add(SCENARIO, variant.name(backlog), "commit→dispatch p50 (JVM clock)",
					"ms", trials.stream().map((f) -> f[0]).toList());
			if (variant.limit() != 0) {
				this.bench.report.compare(p50, "alone + " + Report.format(p50.median() - alone) + " ms");
			}
			this.bench.report.add(SCENARIO, variant.name(backlog), "commit→dispatch p99 (JVM clock)", "ms",
					trials.stream().map((f) -> f[1]).toList());
			if (variant.limit() != 0) {
				this.bench.report.add(SCENARIO, variant.name(backlog), "limited calls meanwhile", "",
						trials.stream().map((f) -> f[2]).toList());
			}
		}
		StringBuilder overlaps = new StringBuilder();
		for (Variant variant : systems.subList(1, systems.size())) {
			overlaps.append((overlaps.length() > 0) ? "; " : "")
				.append(variant.name(backlog))
				.append(": ")
				.append(figures.get(variant).stream().map((f) -> (int) f[3]).toList());
		}
		this.bench.report
			.note("Scenario 8b: most limited calls seen at once, per trial (8 drainer threads): " + overlaps + ".");
	}

	/**
	 * One system of the scenario.
	 *
	 * @param limit the limited effect's limit, 0 for no backlog
	 * @param dispatchAtCommit {@code ductor.effects.drainer.dispatch-at-commit}
	 */
	record Variant(int limit, boolean dispatchAtCommit) {

		String name(int backlog) {
			if (this.limit == 0) {
				return "Ductor, unlimited effect alone";
			}
			return "Ductor, beside " + String.format(java.util.Locale.ROOT, "%,d", backlog) + " limited to "
					+ this.limit + (this.dispatchAtCommit ? "" : ", dispatch at commit off");
		}

	}

	/**
	 * @return p50 and p99 of the unlimited effect's commit→dispatch lag (ms), the limited
	 * calls that ran meanwhile, and the most limited calls at once
	 */
	private double[] trial(Db db, Variant variant, int backlog) {
		Effects.reset();
		int limit = variant.limit();
		List<ConfigurableApplicationContext> instances = new ArrayList<>();
		try {
			ConfigurableApplicationContext context = start(db, limit, variant.dispatchAtCommit());
			instances.add(context);
			if (limit != 0) {
				Bench.execute(db, "INSERT INTO eec_effect_intent (effect_name, idempotency_key, payload, "
						+ "payload_fingerprint, max_attempts, next_attempt_at) SELECT 'bench-limited', 'limited:' || g, "
						+ "'[\"x\"]', 'benchmark', 3, now() - interval '1 second' FROM generate_series(1, " + backlog
						+ ") AS g", "SELECT pg_notify('ductor_effects', 'benchmark')");
				// the drainer at work on the backlog before the first unlimited commit
				long warm = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
				while (Effects.limitedDone.get() < 2 * Math.min(limit, 8) && System.nanoTime() < warm) {
					Bench.sleep(10);
				}
			}
			Effects effects = context.getBean(Effects.class);
			TransactionTemplate tx = new TransactionTemplate(context.getBean(PlatformTransactionManager.class));
			int n = RATE * this.bench.options.lagSeconds();
			int limitedBefore = Effects.limitedDone.get();
			long interval = TimeUnit.SECONDS.toNanos(1) / RATE;
			long next = System.nanoTime();
			for (int i = 0; i < n; i++) {
				LockSupport.parkNanos(next - System.nanoTime());
				next += interval;
				String key = "unlimited:" + i;
				tx.executeWithoutResult((status) -> {
					// stamped by the first after-commit work, before the hand-over to the
					// drainer
					TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {

						@Override
						public void afterCommit() {
							Effects.committed.put(key, System.nanoTime());
						}

					});
					effects.unlimited(key);
				});
			}
			long deadline = System.nanoTime() + Bench.TIMEOUT.toNanos();
			while (Effects.dispatched.size() < n) {
				if (System.nanoTime() > deadline) {
					throw new IllegalStateException("Only " + Effects.dispatched.size() + " of " + n
							+ " unlimited effects ran within " + Bench.TIMEOUT + " beside the limited backlog");
				}
				Bench.sleep(5);
			}
			int limitedMeanwhile = Effects.limitedDone.get() - limitedBefore;
			double[] lags = Effects.dispatched.entrySet()
				.stream()
				.mapToDouble((e) -> (e.getValue() - Effects.committed.get(e.getKey())) / 1e6)
				.toArray();
			return new double[] { Stats.percentile(lags, 50), Stats.percentile(lags, 99), limitedMeanwhile,
					Effects.maxOverlap.get() };
		}
		finally {
			instances.forEach(ConfigurableApplicationContext::close);
		}
	}

	private static ConfigurableApplicationContext start(Db db, int limit, boolean dispatchAtCommit) {
		List<String> properties = new ArrayList<>(List.of(db.datasourceProperties(DuctorSystem.POOL_SIZE)));
		properties.addAll(List.of("spring.main.banner-mode=off", "spring.main.log-startup-info=false",
				"ductor.effects.alarm-scheduler.enabled=false",
				"ductor.effects.overrides.bench-limited.max-concurrency=" + Math.max(limit, 1),
				"ductor.effects.drainer.dispatch-at-commit=" + dispatchAtCommit));
		properties.addAll(DuctorSystem.extraProperties);
		return new SpringApplicationBuilder(Application.class).web(WebApplicationType.NONE)
			.properties(properties.toArray(String[]::new))
			.run();
	}

	@Configuration(proxyBeanMethods = false)
	@ImportAutoConfiguration({ DataSourceAutoConfiguration.class, DataSourceTransactionManagerAutoConfiguration.class,
			TransactionAutoConfiguration.class, JacksonAutoConfiguration.class, DuctorAutoConfiguration.class,
			DuctorEffectsAutoConfiguration.class })
	static class Application {

		@Bean
		Effects effects() {
			return new Effects();
		}

	}

	/**
	 * The two effects: an unlimited no-op that notes when it runs, and a slow one whose
	 * limit each trial sets.
	 */
	public static class Effects {

		static final Map<String, Long> committed = new ConcurrentHashMap<>();

		static final Map<String, Long> dispatched = new ConcurrentHashMap<>();

		static final AtomicInteger running = new AtomicInteger();

		static final AtomicInteger maxOverlap = new AtomicInteger();

		static final AtomicInteger limitedDone = new AtomicInteger();

		static void reset() {
			committed.clear();
			dispatched.clear();
			running.set(0);
			maxOverlap.set(0);
			limitedDone.set(0);
		}

		@DurableEffect(name = "bench-unlimited", key = "#key")
		public void unlimited(String key) {
			dispatched.put(EffectContext.current().idempotencyKey(), System.nanoTime());
		}

		@DurableEffect(name = "bench-limited", maxConcurrency = LOW_LIMIT)
		public void limited(String value) throws InterruptedException {
			maxOverlap.accumulateAndGet(running.incrementAndGet(), Math::max);
			try {
				Thread.sleep(SLOW_MILLIS);
			}
			finally {
				running.decrementAndGet();
				limitedDone.incrementAndGet();
			}
		}

	}

}
