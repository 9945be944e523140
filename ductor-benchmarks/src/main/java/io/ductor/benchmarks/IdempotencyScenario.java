package io.ductor.benchmarks;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;

import com.zaxxer.hikari.HikariDataSource;

import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.simple.JdbcClient;

import io.ductor.idempotency.DuplicatePolicy;
import io.ductor.idempotency.IdempotencyService;
import io.ductor.idempotency.IdempotentRequest;
import io.ductor.idempotency.IdempotentResult;
import io.ductor.idempotency.ReserveOutcome;
import io.ductor.idempotency.StoredResponse;

/**
 * Scenario 5: ingress idempotency.
 * <p>
 * Round trips: N distinct keys from P threads, each reserved and then completed.
 * <i>Ductor</i>: {@link IdempotencyService#reserve(IdempotentRequest)} then
 * {@link IdempotencyService#complete complete(reservation, decisionId, 201 response)},
 * the service from Ductor's auto-configuration with its defaults (the completion also
 * sends the {@code pg_notify} that wakes parked duplicates). <i>Raw JDBC</i>: two
 * autocommitted statements per key on the same {@code eec_routing_idempotency} table:
 * reserve ({@code INSERT … ON CONFLICT DO
 * NOTHING}) and complete (an update fenced by the owner token), no notification. <i>Raw
 * JDBC + pg_notify</i>: the same, with the completion also announcing the key by
 * {@code pg_notify} in its statement, as Ductor's completion does: it shows what the
 * notification alone costs. All first run {@value #WARM_UP} untimed keys on the same
 * pool.
 * <p>
 * Duplicate storm: {@value #STORM} threads released together call
 * {@link IdempotencyService#execute(IdempotentRequest, DuplicatePolicy, Class, java.util.function.Supplier)
 * execute} with one key under {@link DuplicatePolicy#WAIT}; the action holds the key for
 * {@value #ACTION_MILLIS} ms. Measured: from the release to the moment the last of them
 * has its answer. Every answer must be the same value and the action must have run
 * exactly once, or the trial fails.
 */
final class IdempotencyScenario {

	static final int STORM = 200;

	private static final String DUCTOR = "Ductor";

	private static final String RAW = "raw JDBC";

	/**
	 * Raw, with the completion announcing the key by {@code pg_notify} in its statement,
	 * as Ductor's does.
	 */
	private static final String RAW_NOTIFY = "raw JDBC + pg_notify";

	static final long ACTION_MILLIS = 50;

	static final int WARM_UP = 200;

	/** Keys of the untimed trial each system runs before the timed ones. */
	private static final int WARM_UP_TRIAL = 2_000;

	private static final byte[] BODY = "{\"status\":201}".getBytes(StandardCharsets.UTF_8);

	private final Bench bench;

	IdempotencyScenario(Bench bench) {
		this.bench = bench;
	}

	void run() {
		Options options = this.bench.options;
		String scenario = "5 idempotency";
		int total = options.ticks();
		int threads = options.producers();
		String metric = "reserve + complete/s, " + total + " keys, " + threads + " threads";
		if (total >= 2 * WARM_UP_TRIAL) {
			// one untimed trial each, so the first timed trial does not pay for JIT and
			// class loading
			List.of(DUCTOR, RAW, RAW_NOTIFY).forEach((system) -> roundTrips(system, WARM_UP_TRIAL, threads));
			Bench.progress(scenario + " warm-up done");
		}
		Map<String, List<Double>> results = this.bench.alternate(scenario, List.of(DUCTOR, RAW, RAW_NOTIFY), (s) -> s,
				options.trials(), (system) -> roundTrips(system, total, threads));
		Report report = this.bench.report;
		Report.Row ductorRow = report.add(scenario, DUCTOR, metric, "/s", results.get(DUCTOR));
		Report.Row rawRow = report.add(scenario, RAW, metric, "/s", results.get(RAW));
		Report.Row notifyRow = report.add(scenario, RAW_NOTIFY, metric, "/s", results.get(RAW_NOTIFY));
		double ratio = ductorRow.median() / rawRow.median();
		report.judge(ductorRow, Report.ratio(ratio) + " raw, " + Report.ratio(ductorRow.median() / notifyRow.median())
				+ " raw + pg_notify", "≥ 0.5× raw", ratio >= 0.5);
		report.compare(notifyRow, Report.ratio(notifyRow.median() / rawRow.median()) + " raw");

		List<Double> storm = new ArrayList<>();
		for (int t = 0; t < options.trials(); t++) {
			storm.add(ductorStorm());
			Bench.progress(scenario + " storm trial " + (t + 1) + "/" + options.trials() + ": "
					+ Report.format(storm.get(t)) + " ms");
		}
		report.compare(
				report.add(scenario, "Ductor",
						STORM + "-way duplicate storm (WAIT, action holds " + ACTION_MILLIS
								+ " ms): ms until every caller has its answer",
						"ms", storm),
				"all " + STORM + " answers equal, action ran once");
	}

	private double roundTrips(String system, int total, int threads) {
		return switch (system) {
			case DUCTOR -> ductorRoundTrips(total, threads);
			case RAW -> rawRoundTrips(total, threads, false);
			default -> rawRoundTrips(total, threads, true);
		};
	}

	/**
	 * Reserve + complete round trips per second through Ductor's
	 * {@link IdempotencyService}.
	 */
	double ductorRoundTrips(int total, int threads) {
		return this.bench.withDatabase((db) -> {
			try (ConfigurableApplicationContext context = DuctorSystem.startWithIdempotency(db, Probe.counting(1))) {
				IdempotencyService service = context.getBean(IdempotencyService.class);
				RoundTrip roundTrip = (key) -> {
					ReserveOutcome outcome = service.reserve(new IdempotentRequest("bench", "orders", key, "fp"));
					if (!(outcome instanceof ReserveOutcome.Reserved reserved)) {
						throw new IllegalStateException("Key " + key + " was not reserved: " + outcome);
					}
					service.complete(reserved.reservation(), "decision-" + key,
							new StoredResponse(201, Map.of(), BODY));
				};
				return timed("Ductor", total, threads, roundTrip);
			}
		});
	}

	/**
	 * {@value #STORM} callers of one key released together under
	 * {@link DuplicatePolicy#WAIT}.
	 * @return ms from the release until every caller has its answer
	 */
	double ductorStorm() {
		return this.bench.withDatabase((db) -> {
			try (ConfigurableApplicationContext context = DuctorSystem.startWithIdempotency(db, Probe.counting(1))) {
				IdempotencyService service = context.getBean(IdempotencyService.class);
				// warm the service's path (and the pool) once, on another key
				service.execute(new IdempotentRequest("bench", "orders", "warm-up", "fp"), DuplicatePolicy.WAIT,
						String.class, () -> "warm");
				IdempotentRequest request = new IdempotentRequest("bench", "orders", "storm", "fp");
				AtomicInteger runs = new AtomicInteger();
				CountDownLatch ready = new CountDownLatch(STORM);
				CountDownLatch go = new CountDownLatch(1);
				ExecutorService callers = Executors.newFixedThreadPool(STORM);
				try {
					List<Future<IdempotentResult<String>>> answers = new ArrayList<>();
					for (int i = 0; i < STORM; i++) {
						answers.add(callers.submit(() -> {
							ready.countDown();
							go.await();
							return service.execute(request, DuplicatePolicy.WAIT, String.class, () -> {
								runs.incrementAndGet();
								Bench.sleep(ACTION_MILLIS);
								return "decision-" + UUID.randomUUID();
							});
						}));
					}
					ready.await();
					long start = System.nanoTime();
					go.countDown();
					List<IdempotentResult<String>> results = new ArrayList<>();
					for (Future<IdempotentResult<String>> answer : answers) {
						results.add(answer.get(Bench.TIMEOUT.toMillis(), TimeUnit.MILLISECONDS));
					}
					double millis = (System.nanoTime() - start) / 1e6;
					checkStorm(results, runs.get());
					return millis;
				}
				catch (ExecutionException ex) {
					throw new IllegalStateException("A caller of the duplicate storm failed: " + ex.getCause(), ex);
				}
				catch (InterruptedException | TimeoutException ex) {
					throw new IllegalStateException("The duplicate storm did not finish within " + Bench.TIMEOUT, ex);
				}
				finally {
					callers.shutdownNow();
				}
			}
		});
	}

	private static void checkStorm(List<IdempotentResult<String>> results, int runs) {
		Set<String> values = new HashSet<>();
		long computed = 0;
		for (IdempotentResult<String> result : results) {
			values.add(result.value());
			computed += result.replayed() ? 0 : 1;
		}
		if (results.size() != STORM || values.size() != 1 || runs != 1 || computed != 1) {
			throw new IllegalStateException("Duplicate storm broken: " + results.size() + " answers, " + values.size()
					+ " distinct values " + values + ", action ran " + runs + " times, " + computed
					+ " answers not replayed; expected " + STORM + " equal answers from one run");
		}
	}

	/** One reserve + complete of a key. */
	private interface RoundTrip {

		void run(String key);

	}

	/**
	 * Warm up on {@value #WARM_UP} keys, then time {@code total} keys from
	 * {@code threads} threads.
	 */
	private static double timed(String system, int total, int threads, RoundTrip roundTrip) {
		for (int i = 0; i < WARM_UP; i++) {
			roundTrip.run("warm-" + i);
		}
		AtomicInteger next = new AtomicInteger();
		ExecutorService workers = Executors.newFixedThreadPool(threads);
		try {
			long start = System.nanoTime();
			List<Future<?>> running = new ArrayList<>();
			for (int t = 0; t < threads; t++) {
				running.add(workers.submit(() -> {
					for (int i = next.getAndIncrement(); i < total; i = next.getAndIncrement()) {
						roundTrip.run("key-" + i);
					}
				}));
			}
			for (Future<?> future : running) {
				future.get();
			}
			return total / ((System.nanoTime() - start) / 1e9);
		}
		catch (Exception ex) {
			throw new IllegalStateException("A " + system + " idempotency round trip failed", ex);
		}
		finally {
			workers.shutdownNow();
		}
	}

	private double rawRoundTrips(int total, int threads, boolean notify) {
		return this.bench.withDatabase((db) -> {
			try (HikariDataSource pool = db.pool(DuctorSystem.POOL_SIZE)) {
				Bench.migrateDuctorSchema(pool);
				JdbcClient jdbc = JdbcClient.create(pool);
				return timed(RAW, total, threads, (key) -> reserveAndComplete(jdbc, key, notify));
			}
		});
	}

	private static void reserveAndComplete(JdbcClient jdbc, String key, boolean notify) {
		UUID token = UUID.randomUUID();
		int reserved = jdbc
			.sql("""
					INSERT INTO eec_routing_idempotency (tenant_scope, pool_id, idempotency_key, status, request_fingerprint,
					    owner_token, expires_at)
					VALUES ('bench', 'orders', ?, 'pending', 'fp', ?, now() + interval '1 hour')
					ON CONFLICT DO NOTHING""")
			.params(key, token)
			.update();
		String update = """
				UPDATE eec_routing_idempotency
				SET status = 'completed', decision_id = ?, response_status = 201, response_headers = '{}'::jsonb,
				    response_body = ?, expires_at = now() + interval '1 day', updated_at = now()
				WHERE tenant_scope = 'bench' AND pool_id = 'orders' AND idempotency_key = ?
				  AND owner_token = ? AND status = 'pending'""";
		int completed = notify ? jdbc
			.sql("WITH settled AS (" + update + " RETURNING tenant_scope, pool_id, idempotency_key) "
					+ "SELECT count(pg_notify('" + IdempotencyService.CHANNEL
					+ "', tenant_scope || chr(31) || pool_id || chr(31) || idempotency_key))::int FROM settled")
			.params("decision-" + key, BODY, key, token)
			.query(Integer.class)
			.single() : jdbc.sql(update).params("decision-" + key, BODY, key, token).update();
		if (reserved != 1 || completed != 1) {
			throw new IllegalStateException("Key " + key + " was not reserved and completed once");
		}
	}

}
