package io.ductor.benchmarks;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;

import javax.sql.DataSource;

import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.simple.JdbcClient;

import io.ductor.idempotency.IdempotencyService;
import io.ductor.idempotency.IdempotentRequest;
import io.ductor.idempotency.IdempotentResult;

/**
 * Scenario 7: an idempotent handler that writes one row, in each of the two modes of
 * {@code @Idempotent}, through {@link IdempotencyService} from Ductor's
 * auto-configuration with its defaults.
 * <p>
 * N distinct keys from P threads; each request inserts one {@code bench_booking} row.
 * <i>One transaction</i> ({@code IdempotencyMode.ONE_TRANSACTION}, the default):
 * {@link IdempotencyService#executeInTransaction(IdempotentRequest, Class, java.util.function.Supplier)
 * executeInTransaction}, so the reservation, the row and the completed record are one
 * commit. <i>Two-phase</i> ({@code IdempotencyMode.TWO_PHASE}):
 * {@link IdempotencyService#execute(IdempotentRequest, Class, java.util.function.Supplier)
 * execute}, so the reservation, the row (the handler's own transaction) and the
 * completion are three commits. Both first run {@value IdempotencyScenario#WARM_UP}
 * untimed keys on the same pool; a trial fails unless every key wrote one row and has one
 * completed record.
 */
final class IdempotencyModesScenario {

	static final String ONE_TRANSACTION = "one transaction";

	static final String TWO_PHASE = "two-phase";

	private final Bench bench;

	IdempotencyModesScenario(Bench bench) {
		this.bench = bench;
	}

	void run() {
		Options options = this.bench.options;
		String scenario = "7 idempotent handler";
		int total = options.ticks();
		int threads = options.producers();
		String metric = "requests/s, handler writes one row, " + total + " keys, " + threads + " threads";
		List<String> load = new ArrayList<>();
		Map<String, List<Double>> results = this.bench.alternate(scenario, List.of(ONE_TRANSACTION, TWO_PHASE),
				(s) -> s, options.trials(), (mode) -> {
					double perSecond = requests(mode, total, threads);
					load.add(BenchmarkMain.loadAverage().split(",")[0]);
					return perSecond;
				});
		Report report = this.bench.report;
		Report.Row one = report.add(scenario, ONE_TRANSACTION, metric, "/s", results.get(ONE_TRANSACTION));
		Report.Row two = report.add(scenario, TWO_PHASE, metric, "/s", results.get(TWO_PHASE));
		report.compare(one, Report.ratio(one.median() / two.median()) + " two-phase");
		report.note("Scenario 7: the 1-minute load average after each trial, in run order: " + String.join(" / ", load)
				+ ".");
	}

	/** Requests per second of one trial in {@code mode}, on a fresh database. */
	double requests(String mode, int total, int threads) {
		return this.bench.withDatabase((db) -> {
			try (ConfigurableApplicationContext context = DuctorSystem.startWithIdempotency(db, Probe.counting(1))) {
				IdempotencyService service = context.getBean(IdempotencyService.class);
				JdbcClient jdbc = JdbcClient.create(context.getBean(DataSource.class));
				jdbc.sql("CREATE TABLE bench_booking (id text PRIMARY KEY, request_key text NOT NULL, amount integer"
						+ " NOT NULL)")
					.update();
				Request request = (key) -> {
					IdempotentRequest idempotent = new IdempotentRequest("bench", "bookings", key, "fp");
					java.util.function.Supplier<String> handler = () -> {
						String id = "b-" + key;
						jdbc.sql("INSERT INTO bench_booking (id, request_key, amount) VALUES (?, ?, 100)")
							.params(id, key)
							.update();
						return id;
					};
					IdempotentResult<String> result = ONE_TRANSACTION.equals(mode)
							? service.executeInTransaction(idempotent, String.class, handler)
							: service.execute(idempotent, String.class, handler);
					if (result.replayed() || !("b-" + key).equals(result.value())) {
						throw new IllegalStateException("Key " + key + " was not decided once: " + result);
					}
				};
				for (int i = 0; i < IdempotencyScenario.WARM_UP; i++) {
					request.run("warm-" + i);
				}
				double perSecond = timed(mode, total, threads, request);
				long rows = jdbc.sql("SELECT count(*) FROM bench_booking").query(Long.class).single();
				long completed = jdbc.sql("SELECT count(*) FROM eec_routing_idempotency WHERE status = 'completed'")
					.query(Long.class)
					.single();
				long expected = total + IdempotencyScenario.WARM_UP;
				if (rows != expected || completed != expected) {
					throw new IllegalStateException(mode + ": " + rows + " rows and " + completed
							+ " completed records for " + expected + " keys");
				}
				return perSecond;
			}
		});
	}

	/** One request with its key. */
	private interface Request {

		void run(String key);

	}

	private static double timed(String mode, int total, int threads, Request request) {
		AtomicInteger next = new AtomicInteger();
		ExecutorService workers = Executors.newFixedThreadPool(threads);
		try {
			long start = System.nanoTime();
			List<Future<?>> running = new ArrayList<>();
			for (int t = 0; t < threads; t++) {
				running.add(workers.submit(() -> {
					for (int i = next.getAndIncrement(); i < total; i = next.getAndIncrement()) {
						request.run("key-" + i);
					}
				}));
			}
			for (Future<?> future : running) {
				future.get();
			}
			return total / ((System.nanoTime() - start) / 1e9);
		}
		catch (Exception ex) {
			throw new IllegalStateException("A " + mode + " request failed", ex);
		}
		finally {
			workers.shutdownNow();
		}
	}

}
