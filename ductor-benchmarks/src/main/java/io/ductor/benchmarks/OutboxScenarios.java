package io.ductor.benchmarks;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * Scenarios 1, 1f, 2 and 6: end-to-end outbox throughput against the raw outbox and
 * Spring Modulith's registry, what each writes per effect, lag at a fixed offered load,
 * and scale-out.
 */
final class OutboxScenarios {

	private static final int WARM_UP_EFFECTS = 2_000;

	private final Bench bench;

	private final OutboxSystem.Kind ductor;

	private final OutboxSystem.Kind raw;

	private final OutboxSystem.Kind modulith;

	private final Map<String, List<Double>> commitsPerEffect = new java.util.HashMap<>();

	/**
	 * The benchmark JVM's CPU time per effect of each throughput trial, in µs, by system.
	 */
	private final Map<String, List<Double>> cpuPerEffect = new java.util.HashMap<>();

	OutboxScenarios(Bench bench) {
		this.bench = bench;
		this.ductor = DuctorSystem.kind(Shape.HEADLINE, 1);
		this.raw = RawOutboxSystem.kind(RawOutboxSystem.Table.MINIMAL, Shape.HEADLINE);
		this.modulith = ModulithSystem.kind(Shape.HEADLINE);
	}

	/** What the server's backends waited on during each system's last lag trial. */
	private final Map<String, String> lagWaits = new LinkedHashMap<>();

	/**
	 * One untimed small trial of each system, so the first measured trial does not pay
	 * for JIT and class loading.
	 */
	void warmUp() {
		if (this.bench.options.effects() < WARM_UP_EFFECTS) {
			return; // a tiny run checks the harness; it measures nothing worth warming up
					// for
		}
		for (OutboxSystem.Kind kind : List.of(this.ductor, this.raw, this.modulith)) {
			throughput(kind, Math.min(WARM_UP_EFFECTS, this.bench.options.effects()), this.bench.options.producers());
		}
		Bench.progress("warm-up done");
	}

	/**
	 * Scenario 1 with the headline effect, 1m with the minimal one: end-to-end throughput
	 * of each system (the raw outbox with and without its index, and Ductor's schema
	 * driven by the raw outbox's statements as a diagnostic), and the producers' own
	 * commit rate with nobody draining (the raw outbox's, and Ductor's with its drainer
	 * off).
	 */
	void endToEnd(Shape shape) {
		Options options = this.bench.options;
		String scenario = (shape == Shape.HEADLINE) ? "1 end-to-end outbox" : "1m end-to-end outbox, minimal effect";
		String metric = "effects/s, N=" + options.effects() + ", P=" + options.producers();
		this.commitsPerEffect.clear();
		OutboxSystem.Kind ductor = DuctorSystem.kind(shape, 1);
		OutboxSystem.Kind raw = RawOutboxSystem.kind(RawOutboxSystem.Table.MINIMAL, shape);
		OutboxSystem.Kind rawWithoutIndex = RawOutboxSystem.kind(RawOutboxSystem.Table.MINIMAL_WITHOUT_INDEX, shape);
		OutboxSystem.Kind modulith = ModulithSystem.kind(shape);
		OutboxSystem.Kind diagnostic = RawOutboxSystem.kind(RawOutboxSystem.Table.DUCTOR_SCHEMA, shape);
		OutboxSystem.Kind producersAlone = RawOutboxSystem.producersAlone(shape);
		OutboxSystem.Kind ductorAlone = ductorAlone(shape);
		List<OutboxSystem.Kind> drained = List.of(ductor, raw, rawWithoutIndex, modulith, diagnostic);
		List<OutboxSystem.Kind> all = new java.util.ArrayList<>(drained);
		all.addAll(List.of(producersAlone, ductorAlone));
		Map<OutboxSystem.Kind, List<Double>> results = this.bench.alternate(scenario, all, OutboxSystem.Kind::name,
				options.trials(),
				(kind) -> (kind == producersAlone || kind == ductorAlone)
						? commitRate(kind, options.effects(), options.producers())
						: throughput(kind, options.effects(), options.producers()));
		Report report = this.bench.report;
		Report.Row ductorRow = report.add(scenario, ductor.name(), metric, "/s", results.get(ductor));
		Report.Row rawRow = report.add(scenario, raw.name(), metric, "/s", results.get(raw));
		for (OutboxSystem.Kind kind : List.of(rawWithoutIndex, modulith, diagnostic)) {
			Report.Row row = report.add(scenario, kind.name(), metric, "/s", results.get(kind));
			report.compare(row, Report.ratio(row.median() / rawRow.median()) + " raw outbox");
		}
		Report.Row ceilingRow = report.add(scenario, producersAlone.name(),
				"commits/s, N=" + options.effects() + ", P=" + options.producers() + ", nothing drains: the ceiling",
				"/s", results.get(producersAlone));
		report.compare(ceilingRow, "Ductor " + Report.ratio(ductorRow.median() / ceilingRow.median()) + ", raw outbox "
				+ Report.ratio(rawRow.median() / ceilingRow.median()) + " of it");
		Report.Row ductorAloneRow = report.add(scenario, ductorAlone.name(),
				"commits/s, N=" + options.effects() + ", P=" + options.producers() + ", drainer off", "/s",
				results.get(ductorAlone));
		double ownCommits = ductorAloneRow.median() / ceilingRow.median();
		report.judge(ductorAloneRow, Report.ratio(ownCommits) + " raw outbox producers alone", "≥ 0.9× raw's producers",
				ownCommits >= 0.9);
		for (OutboxSystem.Kind kind : drained) {
			report.add(scenario, kind.name(), "database commits per effect (producer's included)", "",
					this.commitsPerEffect.get(kind.name()));
		}
		double vsRaw = ductorRow.median() / rawRow.median();
		report.judge(ductorRow, Report.ratio(vsRaw) + " raw outbox", "≥ 0.8× raw outbox", vsRaw >= 0.8);
	}

	/**
	 * Scenario 1f: what one effect costs the database in each system, in counts the load
	 * of the machine hardly moves: statements and round trips (counted by
	 * {@link CountingDriver} on every connection of the system), commits, write-ahead
	 * log, index entries, rows inserted and updated (heap-only or not), and with
	 * {@code pg_stat_statements} each statement's share. N effects from P producers, as
	 * in scenario 1, through the counting driver, so nothing here is timed.
	 */
	void footprint() {
		Options options = this.bench.options;
		String scenario = "1f per effect";
		List<OutboxSystem.Kind> systems = List.of(this.raw,
				RawOutboxSystem.kind(RawOutboxSystem.Table.MINIMAL_WITHOUT_INDEX, Shape.HEADLINE), this.ductor,
				this.modulith, RawOutboxSystem.kind(RawOutboxSystem.Table.DUCTOR_SCHEMA, Shape.HEADLINE));
		Map<String, List<Measured>> measured = new LinkedHashMap<>();
		systems.forEach((kind) -> measured.put(kind.name(), new java.util.ArrayList<>()));
		this.bench.alternate(scenario, systems, OutboxSystem.Kind::name, options.trials(), (kind) -> {
			Measured trial = footprintTrial(kind, options.effects(), options.producers());
			measured.get(kind.name()).add(trial);
			return trial.statements();
		});
		Report report = this.bench.report;
		for (OutboxSystem.Kind kind : systems) {
			String system = kind.name();
			List<Measured> trials = measured.get(system);
			report.add(scenario, system, "statements per effect", "", values(trials, Measured::statements));
			report.add(scenario, system, "round trips per effect (statements, commits, rollbacks)", "",
					values(trials, Measured::roundTrips));
			report.add(scenario, system, "commits per effect", "", values(trials, (m) -> m.delta().commits()));
			report.add(scenario, system, "write-ahead log bytes per effect (whole server)", "B",
					values(trials, (m) -> m.delta().walBytes()));
			if (!trials.get(0).delta().records().isEmpty()) {
				report.add(scenario, system, "write-ahead log bytes per effect, this database's records", "B",
						values(trials, (m) -> m.delta().databaseWal()[0]));
				report.add(scenario, system, "of which full-page images", "B",
						values(trials, (m) -> m.delta().databaseWal()[1]));
				report.add(scenario, system, "index entries written per effect", "",
						values(trials, (m) -> m.delta().indexEntriesTotal()));
			}
			report.add(scenario, system, "rows inserted per effect", "", values(trials, (m) -> m.delta().rows()[0]));
			report.add(scenario, system, "rows updated per effect", "", values(trials, (m) -> m.delta().rows()[1]));
			report.add(scenario, system, "share of updates heap-only (HOT)", "%", values(trials,
					(m) -> (m.delta().rows()[1] == 0) ? 0 : 100 * m.delta().rows()[2] / m.delta().rows()[1]));
			report.add(scenario, system, "rows deleted per effect", "", values(trials, (m) -> m.delta().rows()[3]));
		}
		report.section(footprintDetails(measured));
	}

	/**
	 * The figures of one footprint trial.
	 *
	 * @param statements statements per effect
	 * @param roundTrips round trips per effect
	 * @param delta what the server counted
	 */
	record Measured(double statements, double roundTrips, Footprint.Delta delta) {
	}

	private Measured footprintTrial(OutboxSystem.Kind kind, int n, int producers) {
		return this.bench.withDatabase((db) -> {
			Probe probe = Probe.tracking(n);
			Footprint.Snapshot before;
			long[] sent;
			try (OutboxSystem system = kind.start(db.counting(), probe)) {
				// an idle backend hands over its counts within a second: those of the
				// start-up (migrations) before the first reading
				Bench.sleep(1500);
				before = Footprint.take(db);
				long[] sentBefore = CountingDriver.totals();
				Bench.produceClosedLoop(system, n, producers);
				Bench.awaitCompleted(system, probe);
				long[] sentAfter = CountingDriver.totals();
				sent = new long[] { sentAfter[0] - sentBefore[0], sentAfter[1] - sentBefore[1] };
			}
			return new Measured(sent[0] / (double) n, sent[1] / (double) n, Footprint.since(db, before, n));
		});
	}

	private static void row(StringBuilder out, String... cells) {
		out.append("| ").append(String.join(" | ", cells)).append(" |\n");
	}

	private static List<Double> values(List<Measured> trials, java.util.function.ToDoubleFunction<Measured> value) {
		return trials.stream().mapToDouble(value).boxed().toList();
	}

	/**
	 * Markdown: index entries per effect by index, log records per effect by kind, rows
	 * by table, and the statements that wrote the most log, from each system's trial of
	 * median log.
	 */
	private static String footprintDetails(Map<String, List<Measured>> measured) {
		StringBuilder out = new StringBuilder();
		Map<String, Measured> median = new LinkedHashMap<>();
		measured.forEach((system, trials) -> {
			List<Measured> sorted = trials.stream()
				.sorted(java.util.Comparator.comparingDouble((Measured m) -> m.delta().records().isEmpty()
						? m.delta().walBytes() : m.delta().databaseWal()[0]))
				.toList();
			median.put(system, sorted.get(sorted.size() / 2));
		});
		if (median.values().stream().anyMatch((m) -> !m.delta().indexEntries().isEmpty())) {
			out.append(
					"Index entries written per effect, by index (pg_walinspect; each system's trial of median log):\n\n")
				.append("| System | Index | Entries per effect |\n|---|---|---:|\n");
			median.forEach((system, m) -> m.delta()
				.indexEntries()
				.forEach((index, entries) -> row(out, system, index, Report.format(entries))));
			out.append("\nWrite-ahead log records of the trial's database per effect, by kind:\n\n")
				.append("| System | Record | Records per effect | Bytes per effect | of which full-page images |\n")
				.append("|---|---|---:|---:|---:|\n");
			median.forEach((system, m) -> m.delta()
				.records()
				.forEach((kind, sum) -> row(out, system, kind, Report.format(sum[0]), Report.format(sum[1]),
						Report.format(sum[2]))));
			out.append('\n');
		}
		out.append("Rows per effect, by table (pg_stat_user_tables):\n\n")
			.append("| System | Table | Inserted | Updated | of which heap-only | Deleted |\n")
			.append("|---|---|---:|---:|---:|---:|\n");
		median.forEach((system, m) -> m.delta()
			.tables()
			.forEach((table, rows) -> row(out, system, table, Report.format(rows[0]), Report.format(rows[1]),
					Report.format(rows[2]), Report.format(rows[3]))));
		if (median.values().stream().anyMatch((m) -> !m.delta().statements().isEmpty())) {
			out.append("\nStatements by write-ahead log (pg_stat_statements), per effect:\n\n")
				.append("| System | Statement | Calls | Rows | Log bytes | Full-page images | Mean ms |\n")
				.append("|---|---|---:|---:|---:|---:|---:|\n");
			median.forEach((system, m) -> m.delta()
				.statements()
				.forEach((cost) -> row(out, system, "`" + cost.query().replace("|", "\\|") + "`",
						Report.format(cost.calls()), Report.format(cost.rows()), Report.format(cost.walBytes()),
						Report.format(cost.walImages()), Report.format(cost.meanMillis()))));
		}
		return out.toString();
	}

	/**
	 * Scenario 1t: end-to-end throughput of the headline shape, each producer call an
	 * observed request, with tracing on (every trace sampled, or one in ten; each request
	 * and each attempt a span, the request's trace context stored with every intent)
	 * against the same application with tracing off, in alternating trials.
	 */
	void tracing() {
		Options options = this.bench.options;
		String scenario = "1t end-to-end outbox, tracing";
		this.cpuPerEffect.clear();
		String metric = "effects/s, N=" + options.effects() + ", P=" + options.producers();
		OutboxSystem.Kind off = DuctorSystem.untraced();
		OutboxSystem.Kind on = DuctorSystem.traced();
		OutboxSystem.Kind tracerOnly = DuctorSystem.tracedWithoutDuctorObservations();
		OutboxSystem.Kind sampled = DuctorSystem.tracedAtDefaultSampling();
		OutboxSystem.Kind observingRecordings = DuctorSystem.tracedObservingRecordings();
		Map<OutboxSystem.Kind, List<Double>> results = this.bench.alternate(scenario,
				List.of(off, on, tracerOnly, sampled, observingRecordings), OutboxSystem.Kind::name, options.trials(),
				(kind) -> throughput(kind, options.effects(), options.producers()));
		Report report = this.bench.report;
		Report.Row offRow = report.add(scenario, "Ductor, tracing off", metric, "/s", results.get(off));
		Report.Row onRow = report.add(scenario, "Ductor, tracing on", metric, "/s", results.get(on));
		double ratio = onRow.median() / offRow.median();
		report.judge(onRow, Report.ratio(ratio) + " tracing off", "≥ 0.9× tracing off", ratio >= 0.9);
		Report.Row tracerOnlyRow = report.add(scenario, "Ductor, tracing on, Ductor's observations off", metric, "/s",
				results.get(tracerOnly));
		report.compare(tracerOnlyRow, Report.ratio(tracerOnlyRow.median() / offRow.median()) + " tracing off");
		Report.Row sampledRow = report.add(scenario, "Ductor, tracing on, 10 % sampled", metric, "/s",
				results.get(sampled));
		double sampledRatio = sampledRow.median() / offRow.median();
		report.judge(sampledRow, Report.ratio(sampledRatio) + " tracing off", "≥ 0.9× tracing off",
				sampledRatio >= 0.9);
		Report.Row observingRow = report.add(scenario, observingRecordings.name(), metric, "/s",
				results.get(observingRecordings));
		report.compare(observingRow, Report.ratio(observingRow.median() / offRow.median()) + " tracing off");
		// the benchmark JVM's CPU per effect: what each system costs the application,
		// less sensitive
		// than throughput to what else runs on the machine
		String cpu = "JVM CPU per effect (application and drainer, every thread)";
		Report.Row offCpu = report.add(scenario, "Ductor, tracing off", cpu, "µs", this.cpuPerEffect.get(off.name()));
		for (OutboxSystem.Kind kind : List.of(on, tracerOnly, sampled, observingRecordings)) {
			Report.Row row = report.add(scenario, kind.name(), cpu, "µs", this.cpuPerEffect.get(kind.name()));
			report.compare(row, Report.ratio(row.median() / offCpu.median()) + " tracing off");
		}
	}

	/**
	 * Scenario 2: lag at a fixed offered load, from the start of the producer's
	 * transaction to the completion each system recorded (database timestamps, what the
	 * targets are about), and from the producer's commit to the handler's first line (the
	 * JVM's clock).
	 */
	void lag() {
		Options options = this.bench.options;
		String scenario = "2 lag at " + options.lagRate() + "/s";
		List<OutboxSystem.Kind> systems = List.of(this.ductor, this.raw, this.modulith);
		// one trial yields six figures; keep them per system and percentile
		Map<OutboxSystem.Kind, List<double[]>> lags = new java.util.LinkedHashMap<>();
		systems.forEach((kind) -> lags.put(kind, new java.util.ArrayList<>()));
		this.bench.alternate(scenario, systems, OutboxSystem.Kind::name, options.trials(), (kind) -> {
			double[] figures = lagTrial(kind, options.lagRate(), options.lagSeconds(), options.producers());
			lags.get(kind).add(figures);
			return figures[0];
		});
		Report report = this.bench.report;
		this.lagWaits.forEach((system, summary) -> report.note("Scenario 2, " + system + ", the server's backends "
				+ "during the last trial (statement, wait event, backends per sample): " + summary));
		String[] names = { "p50", "p95", "p99" };
		java.util.function.BiFunction<OutboxSystem.Kind, Integer, Double> median = (kind, index) -> Stats
			.median(lags.get(kind).stream().map((f) -> f[index]).toList());
		for (OutboxSystem.Kind kind : systems) {
			for (int i = 0; i < 3; i++) {
				int index = i;
				Report.Row row = report.add(scenario, kind.name(),
						"transaction start→completion " + names[i] + " (database timestamps)", "ms",
						lags.get(kind).stream().map((f) -> f[index]).toList());
				if (kind == this.ductor && i == 0) {
					double raw = median.apply(this.raw, 0);
					double modulith = median.apply(this.modulith, 0);
					report.judge(row,
							String.format(java.util.Locale.ROOT, "raw outbox + %.2f ms, Modulith %+.2f ms",
									row.median() - raw, row.median() - modulith),
							"≤ raw + 0.5 ms and ≤ Modulith", row.median() <= raw + 0.5 && row.median() <= modulith);
				}
				if (kind == this.ductor && i == 2) {
					double raw = median.apply(this.raw, 2);
					report.judge(row, Report.ratio(row.median() / raw) + " raw outbox", "≤ 2× raw",
							row.median() <= 2 * raw);
				}
			}
			for (int i = 0; i < 3; i++) {
				int index = i + 3;
				report.add(scenario, kind.name(), "commit→dispatch " + names[i] + " (JVM clock)", "ms",
						lags.get(kind).stream().map((f) -> f[index]).toList());
			}
			report.add(scenario, kind.name(), "producer's transaction, its work to its commit, p50 (JVM clock)", "ms",
					lags.get(kind).stream().map((f) -> f[8]).toList());
			report.add(scenario, kind.name(), "producer's transaction, its work to its commit, p99 (JVM clock)", "ms",
					lags.get(kind).stream().map((f) -> f[9]).toList());
			report.add(scenario, kind.name(), "garbage collections of the JVM (every system's) during the trial", "",
					lags.get(kind).stream().map((f) -> f[6]).toList());
			report.add(scenario, kind.name(), "milliseconds the JVM spent in them", "ms",
					lags.get(kind).stream().map((f) -> f[7]).toList());
		}
	}

	void scaleOut() {
		Options options = this.bench.options;
		String scenario = "6 scale-out";
		List<OutboxSystem.Kind> systems = List.of(DuctorSystem.kind(Shape.HEADLINE, 1),
				DuctorSystem.kind(Shape.HEADLINE, 2), DuctorSystem.kind(Shape.HEADLINE, 3));
		Map<OutboxSystem.Kind, List<Double>> results = this.bench.alternate(scenario, systems, OutboxSystem.Kind::name,
				options.trials(), (kind) -> throughput(kind, options.effects(), options.producers()));
		Report report = this.bench.report;
		double one = Stats.median(results.get(systems.get(0)));
		for (int i = 0; i < systems.size(); i++) {
			Report.Row row = report.add(scenario, (i + 1) + " Ductor instance" + ((i == 0) ? "" : "s"),
					"effects/s, N=" + options.effects() + ", P=" + options.producers() + " spread over the instances",
					"/s", results.get(systems.get(i)));
			if (i > 0) {
				report.compare(row, Report.ratio(row.median() / one) + " of 1 instance");
			}
		}
	}

	/**
	 * @return effects per second from the first commit to the last completion
	 */
	double throughput(OutboxSystem.Kind kind, int n, int producers) {
		return this.bench.withDatabase((db) -> {
			Probe probe = Probe.tracking(n);
			double throughput;
			long commitsBefore;
			try (OutboxSystem system = kind.start(db, probe)) {
				Bench.sleep(300);
				commitsBefore = Bench.commits(db);
				long cpuBefore = processCpuNanos();
				Bench.produceClosedLoop(system, n, producers);
				long end = Bench.awaitCompleted(system, probe);
				this.cpuPerEffect.computeIfAbsent(kind.name(), (k) -> new java.util.ArrayList<>())
					.add((processCpuNanos() - cpuBefore) / 1e3 / n);
				if (probe.duplicates() > 0) {
					Bench.progress(kind.name() + " dispatched " + probe.duplicates() + " effect(s) more than once");
				}
				throughput = n / ((end - probe.firstCommitNanos()) / 1e9);
			}
			this.commitsPerEffect.computeIfAbsent(kind.name(), (k) -> new java.util.ArrayList<>())
				.add((Bench.commits(db) - commitsBefore) / (double) n);
			return throughput;
		});
	}

	/**
	 * @return the CPU time this JVM has used, every thread's (GC and compiler included)
	 */
	private static long processCpuNanos() {
		return ((com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory
			.getOperatingSystemMXBean()).getProcessCpuTime();
	}

	/**
	 * Scenario 1g: the producers alone (nothing drains) from the raw outbox to Ductor,
	 * one guarantee or one part of Ductor's table added at each step: a unique key,
	 * Ductor's row, its generated columns, its indexes, and Ductor itself (its drainer
	 * off), with what the server's backends waited on in each.
	 */
	void insertLadder() {
		Options options = this.bench.options;
		String scenario = "1g the producer's insert, step by step";
		List<OutboxSystem.Kind> steps = new java.util.ArrayList<>();
		for (RawOutboxSystem.Table table : List.of(RawOutboxSystem.Table.MINIMAL, RawOutboxSystem.Table.KEYED,
				RawOutboxSystem.Table.DUCTOR_ROW, RawOutboxSystem.Table.DUCTOR_ROW_GENERATED,
				RawOutboxSystem.Table.DUCTOR_TABLE)) {
			steps.add(RawOutboxSystem.producersAlone(table, Shape.HEADLINE));
		}
		steps.add(ductorAlone(Shape.HEADLINE));
		Map<String, String> waits = new LinkedHashMap<>();
		Map<OutboxSystem.Kind, List<Double>> results = this.bench.alternate(scenario, steps, OutboxSystem.Kind::name,
				options.trials(), (kind) -> commitRate(kind, options.effects(), options.producers(), waits));
		Report report = this.bench.report;
		String metric = "commits/s, N=" + options.effects() + ", P=" + options.producers() + ", nothing drains";
		Report.Row raw = null;
		for (OutboxSystem.Kind kind : steps) {
			Report.Row row = report.add(scenario, kind.name(), metric, "/s", results.get(kind));
			if (raw == null) {
				raw = row;
			}
			else {
				report.compare(row, Report.ratio(row.median() / raw.median()) + " raw outbox producers alone");
			}
		}
		waits.forEach((name, summary) -> report.note("Scenario 1g, " + name + ", the server's backends during the "
				+ "last trial (statement, wait event, backends per sample): " + summary));
	}

	private static OutboxSystem.Kind ductorAlone(Shape shape) {
		return new OutboxSystem.Kind("Ductor producers alone",
				(db, probe) -> new DuctorSystem(shape, db, probe, 1, "ductor.effects.drainer.enabled=false"));
	}

	/**
	 * @return intents committed per second by the producers alone, first commit to last:
	 * no system drains faster than its producers commit
	 */
	private double commitRate(OutboxSystem.Kind kind, int n, int producers) {
		return commitRate(kind, n, producers, null);
	}

	/**
	 * As {@link #commitRate(OutboxSystem.Kind, int, int)}, keeping in {@code waits}, when
	 * not {@code null}, what the server's backends waited on meanwhile, by system.
	 */
	private double commitRate(OutboxSystem.Kind kind, int n, int producers, Map<String, String> waits) {
		return this.bench.withDatabase((db) -> {
			try (OutboxSystem system = kind.start(db, Probe.tracking(n))) {
				Bench.sleep(300);
				WaitEvents events = (waits != null) ? WaitEvents.sample(db) : null;
				long start = System.nanoTime();
				Bench.produceClosedLoop(system, n, producers);
				double rate = n / ((System.nanoTime() - start) / 1e9);
				if (events != null) {
					events.close();
					waits.put(kind.name(), events.summary(4));
				}
				return rate;
			}
		});
	}

	/**
	 * Offer {@code rate} effects per second for {@code seconds} from {@code producers}
	 * threads (an open loop: arrivals do not wait for earlier commits).
	 * @return p50, p95, p99 from transaction start to completion on the database clock,
	 * then p50, p95, p99 from commit to dispatch on the JVM clock, in ms
	 */
	private double[] lagTrial(OutboxSystem.Kind kind, int rate, int seconds, int producers) {
		int n = rate * seconds;
		return this.bench.withDatabase((db) -> {
			Probe probe = Probe.lag(n);
			long[] gcBefore;
			long[] gcAfter;
			WaitEvents events;
			// the first second (or fifth) warms up connections and code paths; it is not
			// measured
			int skip = Math.min(rate, n / 5);
			String lagSql;
			try (OutboxSystem system = kind.start(db, probe)) {
				lagSql = system.lagSql();
				Bench.sleep(300);
				// the garbage of the system's start-up is collected before the trial, for
				// every system alike: its pauses would land on the first effects measured
				System.gc();
				ExecutorService pool = Executors.newFixedThreadPool(producers);
				long interval = 1_000_000_000L / rate;
				gcBefore = gcPauses();
				events = WaitEvents.sample(db);
				long start = System.nanoTime();
				for (int i = 0; i < n; i++) {
					long due = start + i * interval;
					for (long wait = due - System.nanoTime(); wait > 0; wait = due - System.nanoTime()) {
						LockSupport.parkNanos(wait);
					}
					int seq = i;
					pool.execute(() -> system.produce(seq));
				}
				pool.shutdown();
				if (!pool.awaitTermination(Bench.TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
					throw new IllegalStateException("Producers did not finish");
				}
				Bench.awaitCompleted(system, probe);
				gcAfter = gcPauses();
				events.close();
				this.lagWaits.put(kind.name(), events.summary(5));
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new IllegalStateException("Interrupted", ex);
			}
			double[] database = Bench.lagsMillis(db, lagSql, skip);
			double[] jvm = probe.jvmLagsMillis(skip);
			double[] transactions = probe.jvmTransactionMillis(skip);
			return new double[] { Stats.percentile(database, 50), Stats.percentile(database, 95),
					Stats.percentile(database, 99), Stats.percentile(jvm, 50), Stats.percentile(jvm, 95),
					Stats.percentile(jvm, 99), gcAfter[0] - gcBefore[0], gcAfter[1] - gcBefore[1],
					Stats.percentile(transactions, 50), Stats.percentile(transactions, 99) };
		});
	}

	/**
	 * @return garbage collections of this JVM so far and the milliseconds they took,
	 * every collector's
	 */
	private static long[] gcPauses() {
		long count = 0;
		long millis = 0;
		for (java.lang.management.GarbageCollectorMXBean collector : java.lang.management.ManagementFactory
			.getGarbageCollectorMXBeans()) {
			count += Math.max(0, collector.getCollectionCount());
			millis += Math.max(0, collector.getCollectionTime());
		}
		return new long[] { count, millis };
	}

}
