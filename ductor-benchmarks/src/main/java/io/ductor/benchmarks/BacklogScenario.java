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

	private static final String LEASED = LeasedRawOutbox.LABEL;

	private final Map<String, List<Double>> commitsPer100 = Map.of("Ductor", new ArrayList<>(), RAW, new ArrayList<>(),
			LEASED, new ArrayList<>());

	/** What the server's backends waited on during each system's last trial. */
	private final Map<String, String> waits = new LinkedHashMap<>();

	/** What each system's trials wrote per intent drained. */
	private final Map<String, List<Footprint.Delta>> written = new LinkedHashMap<>();

	BacklogScenario(Bench bench) {
		this.bench = bench;
	}

	void run() {
		Options options = this.bench.options;
		String scenario = "3 backlog drain";
		int n = options.backlog();
		List<String> systems = List.of("Ductor", RAW, LEASED);
		Map<String, List<Double>> results = this.bench.alternate(scenario, systems, (s) -> s, options.trials(),
				(system) -> system.equals("Ductor") ? ductor(n) : system.equals(RAW) ? raw(n) : leased(n));
		Report report = this.bench.report;
		String metric = "intents/s, " + n + " pending, from the first dispatch";
		Report.Row ductorRow = report.add(scenario, "Ductor", metric, "/s", results.get("Ductor"));
		Report.Row rawRow = report.add(scenario, RAW, metric, "/s", results.get(RAW));
		Report.Row leasedRow = report.add(scenario, LEASED, metric, "/s", results.get(LEASED));
		report.compare(leasedRow, Report.ratio(leasedRow.median() / rawRow.median()) + " raw outbox; Ductor "
				+ Report.ratio(ductorRow.median() / leasedRow.median()) + " of it");
		double ratio = ductorRow.median() / rawRow.median();
		report.judge(ductorRow, Report.ratio(ratio) + " raw outbox", "≥ 0.8× raw outbox", ratio >= 0.8);
		for (String system : systems) {
			report.add(scenario, system, "database commits per 100 intents drained", "",
					this.commitsPer100.get(system));
		}
		this.waits.forEach((system, summary) -> report.note("Scenario 3, " + system + ", the server's backends "
				+ "during the last trial's drain (statement, wait event, backends per sample): " + summary));
		reportWritten(scenario, report);
		if (options.bigBacklog() > 0) {
			bigBacklog(options.bigBacklog(), options.bigBacklogHeap());
		}
	}

	private double ductor(int n) {
		return this.bench.withDatabase((db) -> {
			prepare(db, n);
			Probe probe = (n <= 200_000) ? Probe.tracking(n) : Probe.counting(n);
			Footprint.Snapshot before = Footprint.take(db);
			long commits = Bench.commits(db);
			double rate;
			try (WaitEvents events = WaitEvents.sample(db); DuctorSystem system = new DuctorSystem(db, probe, 1)) {
				long end = Bench.awaitCompleted(system, probe);
				long start = probe.firstDispatchNanos();
				rate = n / ((end - start) / 1e9);
				events.close();
				this.waits.put("Ductor", events.summary(4));
			}
			this.commitsPer100.get("Ductor").add((Bench.commits(db) - commits) * 100.0 / n);
			wrote("Ductor", Footprint.since(db, before, n));
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
			Footprint.Snapshot before = Footprint.take(db);
			long commits = Bench.commits(db);
			double rate;
			try (WaitEvents events = WaitEvents.sample(db);
					RawOutboxSystem system = new RawOutboxSystem(table, Shape.MINIMAL, db, probe, true, false)) {
				long end = Bench.awaitCompleted(system, probe);
				rate = n / ((end - probe.firstDispatchNanos()) / 1e9);
				events.close();
				this.waits.put(RAW, events.summary(4));
			}
			this.commitsPer100.get(RAW).add((Bench.commits(db) - commits) * 100.0 / n);
			wrote(RAW, Footprint.since(db, before, n));
			return rate;
		});
	}

	private double leased(int n) {
		return this.bench.withDatabase((db) -> {
			LeasedRawOutbox.fill(db, n);
			Probe probe = Probe.tracking(n);
			Footprint.Snapshot before = Footprint.take(db);
			long commits = Bench.commits(db);
			double rate;
			try (WaitEvents events = WaitEvents.sample(db); LeasedRawOutbox outbox = LeasedRawOutbox.drain(db, probe)) {
				if (!probe.awaitAll(Bench.TIMEOUT)) {
					throw new IllegalStateException("Only " + probe.distinct() + " of " + n + " rows were dispatched");
				}
				long deadline = System.nanoTime() + Bench.TIMEOUT.toNanos();
				while (outbox.completed() < n) {
					if (System.nanoTime() > deadline) {
						throw new IllegalStateException(
								"Not every dispatched row was stamped done within " + Bench.TIMEOUT);
					}
					Bench.sleep(2);
				}
				rate = n / ((System.nanoTime() - probe.firstDispatchNanos()) / 1e9);
				events.close();
				this.waits.put(LEASED, events.summary(4));
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new IllegalStateException(ex);
			}
			this.commitsPer100.get(LEASED).add((Bench.commits(db) - commits) * 100.0 / n);
			wrote(LEASED, Footprint.since(db, before, n));
			return rate;
		});
	}

	/**
	 * What each system wrote per intent drained: the log, and with {@code pg_walinspect}
	 * the index entries, and with {@code pg_stat_statements} the statements of its last
	 * trial.
	 */
	private void reportWritten(String scenario, Report report) {
		this.written.forEach((system, deltas) -> {
			report.add(scenario, system, "write-ahead log bytes per intent drained (whole server)", "B",
					deltas.stream().map(Footprint.Delta::walBytes).toList());
			if (deltas.stream().noneMatch((delta) -> delta.indexEntries().isEmpty())) {
				report.add(scenario, system, "index entries written per intent drained", "",
						deltas.stream().map(Footprint.Delta::indexEntriesTotal).toList());
			}
			List<Footprint.StatementCost> statements = deltas.get(deltas.size() - 1).statements();
			if (!statements.isEmpty()) {
				report.note("Scenario 3, " + system + ", statements of the last trial per intent drained "
						+ "(pg_stat_statements: calls, log bytes, mean ms): "
						+ String.join("; ", statements.stream()
							.filter((cost) -> cost.calls() >= 0.001)
							.map((cost) -> "`" + cost.query().substring(0, Math.min(60, cost.query().length())) + "…` "
									+ Report.format(cost.calls()) + ", " + Report.format(cost.walBytes()) + " B, "
									+ Report.format(cost.meanMillis()) + " ms")
							.toList()));
			}
		});
	}

	private void wrote(String system, Footprint.Delta delta) {
		this.written.computeIfAbsent(system, (k) -> new ArrayList<>()).add(delta);
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
