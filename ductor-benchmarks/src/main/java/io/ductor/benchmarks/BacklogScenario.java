package io.ductor.benchmarks;

import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Scenario 3: a cold drainer facing a backlog of pending intents, Ductor against the raw
 * outbox with its partial index; and a much larger backlog drained by a separate JVM
 * whose heap is capped, so the cap is real.
 */
final class BacklogScenario {

	private final Bench bench;

	private static final String RAW = RawOutboxSystem.Table.MINIMAL.label();

	private final Map<String, List<Double>> commitsPer100 = Map.of("Ductor", new ArrayList<>(), RAW, new ArrayList<>());

	BacklogScenario(Bench bench) {
		this.bench = bench;
	}

	void run() {
		Options options = this.bench.options;
		String scenario = "3 backlog drain";
		int n = options.backlog();
		Map<String, List<Double>> results = this.bench.alternate(scenario, List.of("Ductor", RAW), (s) -> s,
				options.trials(), (system) -> system.equals("Ductor") ? ductor(n) : raw(n));
		Report report = this.bench.report;
		String metric = "intents/s, " + n + " pending, from the first dispatch";
		Report.Row ductorRow = report.add(scenario, "Ductor", metric, "/s", results.get("Ductor"));
		Report.Row rawRow = report.add(scenario, RAW, metric, "/s", results.get(RAW));
		double ratio = ductorRow.median() / rawRow.median();
		report.judge(ductorRow, Report.ratio(ratio) + " raw outbox", "≥ 0.8× raw outbox", ratio >= 0.8);
		for (String system : List.of("Ductor", RAW)) {
			report.add(scenario, system, "database commits per 100 intents drained", "",
					this.commitsPer100.get(system));
		}
		if (options.bigBacklog() > 0) {
			bigBacklog(options.bigBacklog(), options.bigBacklogHeap());
		}
	}

	private double ductor(int n) {
		return this.bench.withDatabase((db) -> {
			prepare(db, n);
			Probe probe = (n <= 200_000) ? Probe.tracking(n) : Probe.counting(n);
			long commits = Bench.commits(db);
			double rate;
			try (DuctorSystem system = new DuctorSystem(db, probe, 1)) {
				long end = Bench.awaitCompleted(system, probe);
				long start = probe.firstDispatchNanos();
				rate = n / ((end - start) / 1e9);
			}
			this.commitsPer100.get("Ductor").add((Bench.commits(db) - commits) * 100.0 / n);
			return rate;
		});
	}

	private double raw(int n) {
		return this.bench.withDatabase((db) -> {
			RawOutboxSystem.Table table = RawOutboxSystem.Table.MINIMAL;
			try (var pool = db.pool(2)) {
				table.create(pool);
			}
			Bench.execute(db, table.fillSql(n), "VACUUM ANALYZE " + table.tableName());
			Probe probe = Probe.tracking(n);
			long commits = Bench.commits(db);
			double rate;
			try (RawOutboxSystem system = new RawOutboxSystem(table, Shape.MINIMAL, db, probe, true, false)) {
				long end = Bench.awaitCompleted(system, probe);
				rate = n / ((end - probe.firstDispatchNanos()) / 1e9);
			}
			this.commitsPer100.get(RAW).add((Bench.commits(db) - commits) * 100.0 / n);
			return rate;
		});
	}

	/**
	 * Migrate with an instance that does not drain, then fill the backlog with the
	 * application stopped.
	 */
	private static void prepare(Db db, int n) {
		// the schema is migrated at start-up
		DuctorSystem
			.start(db, Probe.counting(1), "ductor.effects.drainer.enabled=false",
					"ductor.effects.reconciler.enabled=false", "ductor.retention.enabled=false")
			.close();
		RawOutboxSystem.Table table = RawOutboxSystem.Table.DUCTOR_SCHEMA;
		Bench.execute(db, table.fillSql(n), "VACUUM ANALYZE " + table.tableName());
	}

	private void bigBacklog(int n, String heap) {
		String scenario = "3 backlog drain";
		this.bench.withDatabase((db) -> {
			Bench.progress(scenario + ": filling " + n + " intents for a JVM with -Xmx" + heap);
			prepare(db, n);
			Map<String, String> result = runChild(db, n, heap);
			Report report = this.bench.report;
			String metric = "intents/s, " + n + " pending, separate JVM -Xmx" + heap;
			if (result == null) {
				report.skipped(scenario, "Ductor", metric, "**missed**: the JVM failed (see its output above)");
				return null;
			}
			Report.Row row = report.add(scenario, "Ductor", metric, "/s",
					List.of(Double.parseDouble(result.get("rate"))));
			report.judge(row,
					"peak heap used " + result.get("peakHeapMb") + " MB of " + result.get("maxHeapMb") + " MB",
					"drained within " + heap, true);
			return null;
		});
	}

	/**
	 * @return the child's RESULT figures, or {@code null} when it failed
	 */
	private static Map<String, String> runChild(Db db, int n, String heap) {
		String java = System.getProperty("java.home") + File.separator + "bin" + File.separator + "java";
		String classPath = System.getProperty("java.class.path");
		List<String> command = new ArrayList<>(List.of(java, "-Xmx" + heap));
		if (!classPath.contains(File.pathSeparator) && classPath.endsWith(".jar")) {
			command.addAll(List.of("-jar", classPath));
		}
		else {
			command.addAll(List.of("-cp", classPath, BenchmarkMain.class.getName()));
		}
		command.addAll(
				List.of("--child=drain", "--jdbc-url=" + db.url(), "--jdbc-user=" + db.user(), "--big-backlog=" + n));
		if (db.password() != null) {
			command.add("--jdbc-password=" + db.password());
		}
		DuctorSystem.extraProperties.forEach((property) -> command.add("--" + property));
		try {
			Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
			Map<String, String> result = null;
			try (BufferedReader lines = new BufferedReader(
					new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
				for (String line = lines.readLine(); line != null; line = lines.readLine()) {
					Bench.progress("[child] " + line);
					if (line.startsWith("RESULT ")) {
						result = new LinkedHashMap<>();
						for (String pair : line.substring(7).split(" ")) {
							String[] kv = pair.split("=", 2);
							result.put(kv[0], kv[1]);
						}
					}
				}
			}
			return (process.waitFor() == 0) ? result : null;
		}
		catch (Exception ex) {
			throw new IllegalStateException("Cannot run the capped-heap JVM", ex);
		}
	}

	/** The child JVM: drain the backlog already in the database, report, exit. */
	static void child(Options options) {
		Db db = new Db(options.jdbcUrl(), options.jdbcUser(), options.jdbcPassword(), null);
		int n = options.bigBacklog();
		Probe probe = Probe.counting(n);
		try (DuctorSystem system = new DuctorSystem(db, probe, 1)) {
			long end = Bench.awaitCompleted(system, probe);
			double seconds = (end - probe.firstDispatchNanos()) / 1e9;
			long peak = 0;
			for (MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
				if (pool.getType() == MemoryType.HEAP) {
					peak += pool.getPeakUsage().getUsed();
				}
			}
			System.out.printf(Locale.ROOT, "RESULT intents=%d seconds=%.2f rate=%.0f peakHeapMb=%d maxHeapMb=%d%n", n,
					seconds, n / seconds, peak >> 20, Runtime.getRuntime().maxMemory() >> 20);
		}
	}

}
