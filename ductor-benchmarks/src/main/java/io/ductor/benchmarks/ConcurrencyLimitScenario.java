package io.ductor.benchmarks;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

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

import io.ductor.autoconfigure.DuctorAutoConfiguration;
import io.ductor.effect.autoconfigure.DuctorEffectsAutoConfiguration;
import io.ductor.effect.DurableEffect;

/**
 * Scenario 8: a concurrency limit costs the other effects nothing. Three instances (eight
 * drainer threads each) drain {@value #QUICK} intents of an unlimited no-op effect, alone
 * or with a backlog of {@value #SLOW} intents of an effect limited to {@value #LIMIT} at
 * once (each call {@value #SLOW_MILLIS} ms) recorded in the same commit, older than them.
 * Measured: the throughput of the unlimited effect (intents per second, from the commit
 * until the last one ran) and, with the backlog, the most limited calls seen at once.
 */
final class ConcurrencyLimitScenario {

	static final int QUICK = 5000;

	static final int SLOW = 800;

	static final int LIMIT = 3;

	static final int SLOW_MILLIS = 20;

	private final Bench bench;

	ConcurrencyLimitScenario(Bench bench) {
		this.bench = bench;
	}

	void run() {
		Bench.progress("scenario 8: concurrency limit");
		Map<Boolean, List<Double>> results = this.bench.alternate("concurrency limit", List.of(false, true),
				(withBacklog) -> withBacklog ? "with a limited backlog" : "alone", this.bench.options.trials(),
				(withBacklog) -> this.bench.withDatabase((db) -> trial(db, withBacklog)));
		List<Double> alone = results.get(false);
		List<Double> beside = results.get(true);
		Report.Row base = this.bench.report.add("8 concurrency limit", "Ductor x3, unlimited effect alone",
				"throughput", "/s", alone);
		Report.Row row = this.bench.report.add("8 concurrency limit", "Ductor x3, beside a backlog limited to " + LIMIT,
				"throughput", "/s", beside);
		double ratio = row.median() / base.median();
		this.bench.report.judge(row, Report.ratio(ratio), ">= 0.9 of alone", ratio >= 0.9);
		this.bench.report.note("Scenario 8: most calls of the effect limited to " + LIMIT + " seen at once, per trial: "
				+ Limited.overlaps + "; limited calls finished when the last unlimited one ran, per trial: "
				+ Limited.slowDoneAtEnd + " of " + SLOW + ".");
	}

	private double trial(Db db, boolean withBacklog) {
		Limited.reset();
		List<ConfigurableApplicationContext> instances = new ArrayList<>();
		try {
			for (int i = 0; i < 3; i++) {
				instances.add(start(db));
			}
			StringBuilder insert = new StringBuilder();
			if (withBacklog) {
				insert.append(intents("bench.slow", SLOW, "now() - interval '1 second'")).append(";\n");
			}
			insert.append(intents("bench.quick", QUICK, "now()")).append(";\n");
			insert.append("SELECT pg_notify('ductor_effects', 'benchmark')");
			long start = System.nanoTime();
			Bench.execute(db, "BEGIN", insert.toString(), "COMMIT");
			long deadline = start + Bench.TIMEOUT.toNanos();
			while (Limited.quick.get() < QUICK) {
				if (System.nanoTime() > deadline) {
					throw new IllegalStateException("Only " + Limited.quick.get() + " of " + QUICK + " ran in time");
				}
				Bench.sleep(2);
			}
			double seconds = (System.nanoTime() - start) / 1e9;
			if (withBacklog) {
				Limited.slowDoneAtEnd.add(Limited.slowDone.get());
				Limited.overlaps.add(Limited.maxOverlap.get());
			}
			return QUICK / seconds;
		}
		finally {
			instances.forEach(ConfigurableApplicationContext::close);
		}
	}

	private static String intents(String effect, int count, String due) {
		return "INSERT INTO eec_effect_intent (effect_name, idempotency_key, payload, payload_fingerprint, max_attempts, "
				+ "next_attempt_at) SELECT '" + effect + "', '" + effect + ":' || g, '[\"x\"]', 'benchmark', 3, " + due
				+ " FROM generate_series(1, " + count + ") AS g";
	}

	private static ConfigurableApplicationContext start(Db db) {
		List<String> properties = new ArrayList<>(List.of(db.datasourceProperties(DuctorSystem.POOL_SIZE)));
		properties.addAll(List.of("spring.main.banner-mode=off", "spring.main.log-startup-info=false",
				"ductor.effects.drainer.concurrency=8", "ductor.effects.alarm-scheduler.enabled=false"));
		properties.addAll(DuctorSystem.extraProperties);
		return new SpringApplicationBuilder(Limits.class).web(WebApplicationType.NONE)
			.properties(properties.toArray(String[]::new))
			.run();
	}

	@Configuration(proxyBeanMethods = false)
	@ImportAutoConfiguration({ DataSourceAutoConfiguration.class, DataSourceTransactionManagerAutoConfiguration.class,
			TransactionAutoConfiguration.class, JacksonAutoConfiguration.class, DuctorAutoConfiguration.class,
			DuctorEffectsAutoConfiguration.class })
	static class Limits {

		@Bean
		Limited limited() {
			return new Limited();
		}

	}

	/**
	 * The two effects: a no-op, and a slow one limited to {@value #LIMIT} at once that
	 * records overlap.
	 */
	public static class Limited {

		static final AtomicInteger quick = new AtomicInteger();

		static final AtomicInteger running = new AtomicInteger();

		static final AtomicInteger maxOverlap = new AtomicInteger();

		static final AtomicInteger slowDone = new AtomicInteger();

		static final List<Integer> overlaps = new java.util.concurrent.CopyOnWriteArrayList<>();

		static final List<Integer> slowDoneAtEnd = new java.util.concurrent.CopyOnWriteArrayList<>();

		static void reset() {
			quick.set(0);
			running.set(0);
			maxOverlap.set(0);
			slowDone.set(0);
		}

		@DurableEffect(name = "bench.quick")
		public void quick(String value) {
			quick.incrementAndGet();
		}

		@DurableEffect(name = "bench.slow", maxConcurrency = LIMIT)
		public void slow(String value) throws InterruptedException {
			maxOverlap.accumulateAndGet(running.incrementAndGet(), Math::max);
			try {
				Thread.sleep(SLOW_MILLIS);
			}
			finally {
				running.decrementAndGet();
				slowDone.incrementAndGet();
			}
		}

	}

}
