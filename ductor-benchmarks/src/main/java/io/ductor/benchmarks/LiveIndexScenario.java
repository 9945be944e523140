package io.ductor.benchmarks;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Scenario 1i: what the console's index of live intents by id
 * ({@code eec_effect_intent_live_id_idx}) costs the producer and the drainer. Scenario
 * 1's headline application, in alternating trials on the schema as migrated (the index
 * holds every live status but {@code in_flight}, so a claim, which moves an intent to
 * {@code in_flight}, writes no entry into it), without the index, and with it on every
 * live status, {@code in_flight} included: end-to-end throughput, the write-ahead log
 * written per effect, and the log of the intents' lives alone (three statements after the
 * trial), which does not depend on the machine's load.
 */
final class LiveIndexScenario {

	private static final String SCENARIO = "1i end-to-end outbox, live index";

	static final String INDEX = "eec_effect_intent_live_id_idx";

	private final Bench bench;

	private final Map<String, List<Double>> walPerEffect = new HashMap<>();

	private final Map<String, List<Double>> walPerLifecycle = new HashMap<>();

	LiveIndexScenario(Bench bench) {
		this.bench = bench;
	}

	void run() {
		Options options = this.bench.options;
		String metric = "effects/s, N=" + options.effects() + ", P=" + options.producers();
		OutboxSystem.Kind migrated = kind("Ductor, " + INDEX + " as migrated");
		OutboxSystem.Kind without = kind("Ductor without " + INDEX, "DROP INDEX " + INDEX);
		OutboxSystem.Kind withInFlight = kind("Ductor, " + INDEX + " of every live status, in_flight included",
				"DROP INDEX " + INDEX, "CREATE INDEX " + INDEX + " ON eec_effect_intent (status, id) "
						+ "WHERE status IN ('pending', 'in_flight', 'reconciling', 'failed', 'needs_decision')");
		List<OutboxSystem.Kind> kinds = List.of(migrated, without, withInFlight);
		Map<OutboxSystem.Kind, List<Double>> results = this.bench.alternate(SCENARIO, kinds, OutboxSystem.Kind::name,
				options.trials(), (kind) -> trial(kind, options.effects(), options.producers()));
		Report report = this.bench.report;
		Report.Row withoutRow = report.add(SCENARIO, without.name(), metric, "/s", results.get(without));
		for (OutboxSystem.Kind kind : List.of(migrated, withInFlight)) {
			Report.Row row = report.add(SCENARIO, kind.name(), metric, "/s", results.get(kind));
			report.compare(row, Report.ratio(row.median() / withoutRow.median()) + " without the index (per-pair "
					+ pairs(results.get(kind), results.get(without)) + ")");
		}
		for (OutboxSystem.Kind kind : kinds) {
			report.add(SCENARIO, kind.name(), "write-ahead log per effect", "bytes",
					this.walPerEffect.get(kind.name()));
		}
		Report.Row withoutLife = report.add(SCENARIO, without.name(),
				"write-ahead log per intent: recorded, claimed, completed (three statements)", "bytes",
				this.walPerLifecycle.get(without.name()));
		for (OutboxSystem.Kind kind : List.of(migrated, withInFlight)) {
			Report.Row row = report.add(SCENARIO, kind.name(),
					"write-ahead log per intent: recorded, claimed, completed (three statements)", "bytes",
					this.walPerLifecycle.get(kind.name()));
			report.compare(row, Report.ratio(row.median() / withoutLife.median()) + " without the index");
		}
	}

	private static OutboxSystem.Kind kind(String name, String... ddl) {
		return new OutboxSystem.Kind(name, (db, probe) -> {
			DuctorSystem system = new DuctorSystem(Shape.HEADLINE, db, probe, 1);
			if (ddl.length > 0) {
				Bench.execute(db, ddl);
			}
			return system;
		});
	}

	private double trial(OutboxSystem.Kind kind, int n, int producers) {
		return this.bench.withDatabase((db) -> {
			Probe probe = Probe.tracking(n);
			try (OutboxSystem system = kind.start(db, probe)) {
				Bench.sleep(300);
				long walBefore = wal(db);
				Bench.produceClosedLoop(system, n, producers);
				long end = Bench.awaitCompleted(system, probe);
				this.walPerEffect.computeIfAbsent(kind.name(), (k) -> new ArrayList<>())
					.add((wal(db) - walBefore) / (double) n);
				double throughput = n / ((end - probe.firstCommitNanos()) / 1e9);
				this.walPerLifecycle.computeIfAbsent(kind.name(), (k) -> new ArrayList<>()).add(lifecycleWal(db, n));
				return throughput;
			}
		});
	}

	/**
	 * The write-ahead log of {@code n} intents' lives in three statements, alone on the
	 * server: recorded pending, claimed (in_flight, leased), completed. Without the
	 * drainer's batching and commits around it, this is what the indexes write per
	 * intent, and it repeats to the byte.
	 */
	private static double lifecycleWal(Db db, int n) {
		long before = wal(db);
		Bench.execute(db, """
				INSERT INTO eec_effect_intent (effect_name, idempotency_key, payload, payload_fingerprint, status,
				       receiver, attempts, max_attempts)
				SELECT 'lifecycle', 'lifecycle-' || k, '[{"order":"x"}]', 'f', 'pending', 'IDEMPOTENT', 0, 3
				FROM generate_series(1, %d) AS k""".formatted(n),
				"UPDATE eec_effect_intent SET status = 'in_flight', lease_owner = 'd', attempts = 1, "
						+ "lease_expires_at = now() + interval '30 seconds' WHERE effect_name = 'lifecycle'",
				"UPDATE eec_effect_intent SET status = 'completed', lease_owner = NULL, lease_expires_at = NULL, "
						+ "finished_at = now() WHERE effect_name = 'lifecycle'");
		return (wal(db) - before) / (double) n;
	}

	private static long wal(Db db) {
		try (Connection connection = db.connect();
				Statement statement = connection.createStatement();
				ResultSet row = statement.executeQuery("SELECT pg_current_wal_insert_lsn() - '0/0'::pg_lsn")) {
			row.next();
			return row.getLong(1);
		}
		catch (SQLException ex) {
			throw new IllegalStateException(ex);
		}
	}

	private static String pairs(List<Double> values, List<Double> baseline) {
		List<String> ratios = new ArrayList<>();
		for (int i = 0; i < Math.min(values.size(), baseline.size()); i++) {
			ratios.add(String.format(java.util.Locale.ROOT, "%.2f", values.get(i) / baseline.get(i)));
		}
		return String.join(" / ", ratios);
	}

}
