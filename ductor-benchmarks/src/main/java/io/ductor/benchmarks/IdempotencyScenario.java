package io.ductor.benchmarks;

import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;

import com.zaxxer.hikari.HikariDataSource;

import org.springframework.jdbc.core.simple.JdbcClient;

/**
 * Scenario 5: ingress idempotency. The raw baseline is two autocommitted statements per request on
 * {@code eec_routing_idempotency}: reserve ({@code INSERT … ON CONFLICT DO NOTHING}) and complete
 * (an update fenced by the owner token).
 * <p>
 * <b>Hook, to finish after the idempotency branch is merged:</b> {@code IdempotencyService} is
 * not in this build, so the Ductor side (reserve + complete round trips, and the 200-way duplicate
 * storm: time until every waiter has its answer) reports itself as skipped. Implement
 * {@link #ductorRoundTrips} and {@link #ductorStorm} against the merged API; nothing here guesses it.
 */
final class IdempotencyScenario {

	static final String SERVICE = "io.ductor.idempotency.IdempotencyService";

	static final int STORM = 200;

	private final Bench bench;

	IdempotencyScenario(Bench bench) {
		this.bench = bench;
	}

	static boolean serviceAvailable() {
		try {
			Class.forName(SERVICE, false, IdempotencyScenario.class.getClassLoader());
			return true;
		}
		catch (ClassNotFoundException ex) {
			return false;
		}
	}

	void run() {
		Options options = this.bench.options;
		String scenario = "5 idempotency";
		int total = options.ticks();
		int threads = options.producers();
		String metric = "reserve + complete/s, " + total + " keys, " + threads + " threads";
		List<Double> raw = new ArrayList<>();
		for (int t = 0; t < options.trials(); t++) {
			raw.add(rawRoundTrips(total, threads));
			Bench.progress(scenario + " trial " + (t + 1) + "/" + options.trials() + ", raw JDBC: "
					+ Report.format(raw.get(t)));
		}
		Report report = this.bench.report;
		String why = serviceAvailable()
				? "not measured: IdempotencyService is present but this scenario's hook is not written yet"
				: "skipped: IdempotencyService not available in this build";
		report.skipped(scenario, "Ductor", metric, why);
		report.add(scenario, "raw JDBC", metric, "/s", raw);
		report.skipped(scenario, "Ductor", STORM + "-way duplicate storm: time until every waiter has its answer", why);
	}

	/** To be written against the merged {@code IdempotencyService}: reserve + complete round trips per second. */
	double ductorRoundTrips(int total, int threads) {
		throw new UnsupportedOperationException("IdempotencyService not available in this build");
	}

	/** To be written against the merged {@code IdempotencyService}: ms until all {@value #STORM} waiters answered. */
	double ductorStorm() {
		throw new UnsupportedOperationException("IdempotencyService not available in this build");
	}

	private double rawRoundTrips(int total, int threads) {
		return this.bench.withDatabase((db) -> {
			try (HikariDataSource pool = RawJdbcSystem.pool(db, DuctorSystem.POOL_SIZE)) {
				RawJdbcSystem.createSchema(pool);
				JdbcClient jdbc = JdbcClient.create(pool);
				AtomicInteger next = new AtomicInteger();
				ExecutorService workers = Executors.newFixedThreadPool(threads);
				try {
					long start = System.nanoTime();
					List<Future<?>> running = new ArrayList<>();
					for (int t = 0; t < threads; t++) {
						running.add(workers.submit(() -> {
							for (int i = next.getAndIncrement(); i < total; i = next.getAndIncrement()) {
								reserveAndComplete(jdbc, "key-" + i);
							}
						}));
					}
					for (Future<?> future : running) {
						future.get();
					}
					return total / ((System.nanoTime() - start) / 1e9);
				}
				catch (Exception ex) {
					throw new IllegalStateException("A raw idempotency round trip failed", ex);
				}
				finally {
					workers.shutdownNow();
				}
			}
		});
	}

	private static void reserveAndComplete(JdbcClient jdbc, String key) {
		UUID token = UUID.randomUUID();
		int reserved = jdbc.sql("""
				INSERT INTO eec_routing_idempotency (tenant_scope, pool_id, idempotency_key, status, request_fingerprint,
				    owner_token, expires_at)
				VALUES ('bench', 'orders', ?, 'pending', 'fp', ?, now() + interval '1 hour')
				ON CONFLICT DO NOTHING""").params(key, token).update();
		int completed = jdbc.sql("""
				UPDATE eec_routing_idempotency
				SET status = 'completed', decision_id = ?, response_status = 201, response_body = '\\x7b7d'::bytea,
				    expires_at = now() + interval '1 day', updated_at = now()
				WHERE tenant_scope = 'bench' AND pool_id = 'orders' AND idempotency_key = ?
				  AND owner_token = ? AND status = 'pending'""").params("decision-" + key, key, token).update();
		if (reserved != 1 || completed != 1) {
			throw new IllegalStateException("Key " + key + " was not reserved and completed once");
		}
	}

}
