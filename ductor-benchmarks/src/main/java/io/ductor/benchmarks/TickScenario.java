package io.ductor.benchmarks;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;

import com.zaxxer.hikari.HikariDataSource;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import io.ductor.run.TickOutcome;
import io.ductor.run.TickService;

/**
 * Scenario 4: ticks. Each of P threads ticks a run of its own (no contention), Ductor's
 * {@link TickService} against the raw conditional update (read the row,
 * {@code UPDATE … WHERE
 * record_version = ?}); then 16 threads tick one run and every conflict is retried.
 */
final class TickScenario {

	private static final int HOT_THREADS = 16;

	private final Bench bench;

	TickScenario(Bench bench) {
		this.bench = bench;
	}

	/** A run's state. */
	public record Counter(long n) {
	}

	void run() {
		Options options = this.bench.options;
		String scenario = "4 ticks";
		int total = options.ticks();
		int threads = options.producers();
		Map<String, List<Double>> results = this.bench.alternate(scenario + " (distinct runs)",
				List.of("Ductor", "raw JDBC"), (s) -> s, options.trials(),
				(system) -> system.equals("Ductor") ? ductorDistinct(total, threads) : rawDistinct(total, threads));
		Report report = this.bench.report;
		String metric = "ticks/s, " + total + " ticks, " + threads + " threads on " + threads + " distinct runs";
		Report.Row ductorRow = report.add(scenario, "Ductor", metric, "/s", results.get("Ductor"));
		Report.Row rawRow = report.add(scenario, "raw JDBC", metric, "/s", results.get("raw JDBC"));
		double ratio = ductorRow.median() / rawRow.median();
		report.judge(ductorRow, Report.ratio(ratio) + " raw", "≥ 0.7× raw", ratio >= 0.7);

		int hot = Math.max(HOT_THREADS, total / 4);
		List<Double> throughput = new ArrayList<>();
		List<Double> retries = new ArrayList<>();
		for (int t = 0; t < options.trials(); t++) {
			double[] figures = ductorHot(hot);
			throughput.add(figures[0]);
			retries.add(figures[1]);
			Bench.progress(scenario + " (one run) trial " + (t + 1) + "/" + options.trials() + ": "
					+ Report.format(figures[0]) + " ticks/s, " + Report.format(figures[1]) + " retries per tick");
		}
		report.add(scenario, "Ductor", "ticks/s, " + hot + " ticks, " + HOT_THREADS + " threads on one run", "/s",
				throughput);
		report.add(scenario, "Ductor", "conflict retries per applied tick (" + HOT_THREADS + " threads, one run)", "",
				retries);
	}

	private double ductorDistinct(int total, int threads) {
		return this.bench.withDatabase((db) -> {
			try (ConfigurableApplicationContext context = DuctorSystem.start(db, Probe.counting(1),
					"ductor.effects.drainer.enabled=false")) {
				TickService ticks = context.getBean(TickService.class);
				for (int t = 0; t < threads; t++) {
					ticks.start("bench", "run-" + t, new Counter(0));
				}
				return timed(total, threads, (thread, i) -> {
					TickOutcome<Counter> outcome = ticks.tick("run-" + thread, "stamp-" + i, Counter.class,
							(state, tick) -> new Counter(state.n() + 1));
					if (outcome.result() != TickOutcome.Result.APPLIED) {
						throw new IllegalStateException("Tick not applied: " + outcome.result());
					}
					return 0;
				})[0];
			}
		});
	}

	private double rawDistinct(int total, int threads) {
		return this.bench.withDatabase((db) -> {
			try (HikariDataSource pool = db.pool(DuctorSystem.POOL_SIZE)) {
				Bench.migrateDuctorSchema(pool);
				JdbcClient jdbc = JdbcClient.create(pool);
				TransactionTemplate tx = new TransactionTemplate(new DataSourceTransactionManager(pool));
				JsonMapper json = JsonMapper.builder().build();
				for (int t = 0; t < threads; t++) {
					jdbc.sql("INSERT INTO eec_run (id, type, state) VALUES (?, 'bench', ?::jsonb)")
						.params("run-" + t, json.writeValueAsString(new Counter(0)))
						.update();
				}
				return timed(total, threads, (thread, i) -> {
					String id = "run-" + thread;
					for (int attempt = 1;; attempt++) {
						Boolean applied = tx.execute((status) -> {
							Object[] row = jdbc.sql("SELECT state::text, record_version FROM eec_run WHERE id = ?")
								.param(id)
								.query((rs, r) -> new Object[] { rs.getString(1), rs.getLong(2) })
								.single();
							Counter next = new Counter(json.readValue((String) row[0], Counter.class).n() + 1);
							return jdbc.sql("""
									UPDATE eec_run SET state = ?::jsonb, record_version = record_version + 1,
									    updated_at = now()
									WHERE id = ? AND record_version = ?""")
								.params(json.writeValueAsString(next), id, row[1])
								.update() == 1;
						});
						if (Boolean.TRUE.equals(applied)) {
							return attempt - 1;
						}
					}
				})[0];
			}
		});
	}

	/**
	 * @return ticks per second and conflict retries per applied tick
	 */
	private double[] ductorHot(int total) {
		return this.bench.withDatabase((db) -> {
			try (ConfigurableApplicationContext context = DuctorSystem.start(db, Probe.counting(1),
					"ductor.effects.drainer.enabled=false",
					"spring.datasource.hikari.maximum-pool-size=" + HOT_THREADS)) {
				TickService ticks = context.getBean(TickService.class);
				ticks.start("bench", "hot", new Counter(0));
				return timed(total, HOT_THREADS, (thread, i) -> {
					TickOutcome<Counter> outcome = ticks.tick("hot", "stamp-" + thread + "-" + i, Counter.class,
							(state, tick) -> new Counter(state.n() + 1));
					if (outcome.result() != TickOutcome.Result.APPLIED) {
						throw new IllegalStateException("Tick not applied: " + outcome.result());
					}
					return outcome.attempts() - 1;
				});
			}
		});
	}

	/**
	 * One tick of thread {@code thread}, its {@code i}-th; returns its conflict retries.
	 */
	interface TickCall {

		int tick(int thread, int i);

	}

	/**
	 * @return ticks per second and retries per tick, {@code total} ticks split over
	 * {@code threads}
	 */
	private static double[] timed(int total, int threads, TickCall call) {
		AtomicLong retries = new AtomicLong();
		ExecutorService pool = Executors.newFixedThreadPool(threads);
		int each = total / threads;
		try {
			long start = System.nanoTime();
			List<Future<?>> running = new ArrayList<>();
			for (int t = 0; t < threads; t++) {
				int thread = t;
				running.add(pool.submit(() -> {
					for (int i = 0; i < each; i++) {
						retries.addAndGet(call.tick(thread, i));
					}
				}));
			}
			for (Future<?> future : running) {
				future.get();
			}
			double seconds = (System.nanoTime() - start) / 1e9;
			long ticks = (long) each * threads;
			return new double[] { ticks / seconds, retries.get() / (double) ticks };
		}
		catch (Exception ex) {
			throw new IllegalStateException("A tick failed", ex);
		}
		finally {
			pool.shutdownNow();
		}
	}

}
