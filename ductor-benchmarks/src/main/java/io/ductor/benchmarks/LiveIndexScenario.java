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
 * Scenario 1i: what the console's index of live intents by id ({@code eec_effect_intent_live_id_idx})
 * costs the producer and the drainer. Scenario 1's headline application, in alternating trials on
 * the schema as migrated, without the index, and with the index on all live statuses but
 * {@code in_flight} (so that a claim, which moves an intent to {@code in_flight}, writes no entry
 * into it); end-to-end throughput and the write-ahead log written per effect.
 */
final class LiveIndexScenario {

	private static final String SCENARIO = "1i end-to-end outbox, live index";

	static final String INDEX = "eec_effect_intent_live_id_idx";

	private final Bench bench;

	private final Map<String, List<Double>> walPerEffect = new HashMap<>();

	LiveIndexScenario(Bench bench) {
		this.bench = bench;
	}

	void run() {
		Options options = this.bench.options;
		String metric = "effects/s, N=" + options.effects() + ", P=" + options.producers();
		OutboxSystem.Kind migrated = kind("Ductor, " + INDEX + " as migrated");
		OutboxSystem.Kind without = kind("Ductor without " + INDEX, "DROP INDEX " + INDEX);
		OutboxSystem.Kind allButInFlight = kind("Ductor, " + INDEX + " of every live status but in_flight",
				"DROP INDEX " + INDEX, "CREATE INDEX " + INDEX + " ON eec_effect_intent (status, id) "
						+ "WHERE status IN ('pending', 'reconciling', 'failed', 'needs_decision')");
		List<OutboxSystem.Kind> kinds = List.of(migrated, without, allButInFlight);
		Map<OutboxSystem.Kind, List<Double>> results = this.bench.alternate(SCENARIO, kinds, OutboxSystem.Kind::name,
				options.trials(), (kind) -> trial(kind, options.effects(), options.producers()));
		Report report = this.bench.report;
		Report.Row withoutRow = report.add(SCENARIO, without.name(), metric, "/s", results.get(without));
		for (OutboxSystem.Kind kind : List.of(migrated, allButInFlight)) {
			Report.Row row = report.add(SCENARIO, kind.name(), metric, "/s", results.get(kind));
			report.compare(row, Report.ratio(row.median() / withoutRow.median()) + " without the index (per-pair "
					+ pairs(results.get(kind), results.get(without)) + ")");
		}
		for (OutboxSystem.Kind kind : kinds) {
			report.add(SCENARIO, kind.name(), "write-ahead log per effect", "bytes", this.walPerEffect.get(kind.name()));
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
				return n / ((end - probe.firstCommitNanos()) / 1e9);
			}
		});
	}

	private static long wal(Db db) {
		try (Connection connection = db.connect(); Statement statement = connection.createStatement();
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
