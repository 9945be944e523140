package io.ductor.benchmarks;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import com.zaxxer.hikari.HikariDataSource;

/**
 * Scenarios 1, 2 and 6: end-to-end outbox throughput against the raw JDBC path and Spring
 * Modulith's registry, commit-to-dispatch lag at a fixed offered load, and scale-out.
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
		this.raw = RawJdbcSystem.kind(Shape.HEADLINE, bench.options.rawWorkers());
		this.modulith = ModulithSystem.kind(Shape.HEADLINE);
	}

	/**
	 * The raw producers with nobody draining: what the producers' own commits allow at
	 * most.
	 */
	private static OutboxSystem.Kind producersAlone(Shape shape) {
		return new OutboxSystem.Kind("producers alone", (db, probe) -> new RawJdbcSystem(shape, db, probe, 0, true));
	}

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
	 * of each system, and the producers' own commit rate with nobody draining (raw's, and
	 * Ductor's with its drainer off).
	 */
	void endToEnd(Shape shape) {
		Options options = this.bench.options;
		String scenario = (shape == Shape.HEADLINE) ? "1 end-to-end outbox" : "1m end-to-end outbox, minimal effect";
		String metric = "effects/s, N=" + options.effects() + ", P=" + options.producers();
		this.commitsPerEffect.clear();
		OutboxSystem.Kind ductor = DuctorSystem.kind(shape, 1);
		OutboxSystem.Kind raw = RawJdbcSystem.kind(shape, options.rawWorkers());
		OutboxSystem.Kind modulith = ModulithSystem.kind(shape);
		OutboxSystem.Kind producersAlone = producersAlone(shape);
		OutboxSystem.Kind ductorAlone = new OutboxSystem.Kind("Ductor producers alone",
				(db, probe) -> new DuctorSystem(shape, db, probe, 1, "ductor.effects.drainer.enabled=false"));
		Map<OutboxSystem.Kind, List<Double>> results = this.bench.alternate(scenario,
				List.of(ductor, raw, modulith, producersAlone, ductorAlone), OutboxSystem.Kind::name, options.trials(),
				(kind) -> (kind == producersAlone || kind == ductorAlone)
						? commitRate(kind, options.effects(), options.producers())
						: throughput(kind, options.effects(), options.producers()));
		Report report = this.bench.report;
		Report.Row ductorRow = report.add(scenario, "Ductor", metric, "/s", results.get(ductor));
		Report.Row rawRow = report.add(scenario, "raw JDBC", metric, "/s", results.get(raw));
		Report.Row modulithRow = report.add(scenario, "Spring Modulith", metric, "/s", results.get(modulith));
		Report.Row ceilingRow = report.add(scenario, "raw producers alone",
				"commits/s, N=" + options.effects() + ", P=" + options.producers() + ", nothing drains: the ceiling",
				"/s", results.get(producersAlone));
		report.compare(ceilingRow,
				"Ductor " + Report.ratio(ductorRow.median() / ceilingRow.median()) + ", raw "
						+ Report.ratio(rawRow.median() / ceilingRow.median()) + ", Modulith "
						+ Report.ratio(modulithRow.median() / ceilingRow.median()) + " of it");
		Report.Row ductorAloneRow = report.add(scenario, "Ductor producers alone",
				"commits/s, N=" + options.effects() + ", P=" + options.producers() + ", drainer off", "/s",
				results.get(ductorAlone));
		double ownCommits = ductorAloneRow.median() / ceilingRow.median();
		report.judge(ductorAloneRow, Report.ratio(ownCommits) + " raw producers alone", "≥ 0.85× raw's",
				ownCommits >= 0.85);
		for (OutboxSystem.Kind kind : List.of(ductor, raw, modulith)) {
			report.add(scenario, kind.name(), "database commits per effect (producer's included)", "",
					this.commitsPerEffect.get(kind.name()));
		}
		double vsRaw = ductorRow.median() / rawRow.median();
		double vsModulith = ductorRow.median() / modulithRow.median();
		report.judge(ductorRow, Report.ratio(vsRaw) + " raw, " + Report.ratio(vsModulith) + " Modulith",
				"≥ 0.8× raw and ≥ 3× Modulith", vsRaw >= 0.8 && vsModulith >= 3);
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
		String[] names = { "p50", "p95", "p99" };
		double rawP50 = Stats.median(lags.get(this.raw).stream().map((f) -> f[0]).toList());
		for (OutboxSystem.Kind kind : systems) {
			for (int i = 0; i < 3; i++) {
				int index = i;
				Report.Row row = report.add(scenario, kind.name(), "commit→dispatch " + names[i] + " (JVM clock)", "ms",
						lags.get(kind).stream().map((f) -> f[index]).toList());
				if (kind == this.ductor && i == 0) {
					report.judge(row, String.format(java.util.Locale.ROOT, "raw + %.2f ms", row.median() - rawP50),
							"≤ 1.5 ms and ≤ raw + 0.5 ms", row.median() <= 1.5 && row.median() <= rawP50 + 0.5);
				}
				if (kind == this.ductor && i == 2) {
					report.judge(row, "", "≤ 10 ms", row.median() <= 10);
				}
			}
			for (int i = 0; i < 3; i++) {
				int index = i + 3;
				report.add(scenario, kind.name(), "pre-commit→dispatch " + names[i] + " (DB clock)", "ms",
						lags.get(kind).stream().map((f) -> f[index]).toList());
			}
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
	 * @return intents committed per second by the producers alone, first commit to last:
	 * no system drains faster than its producers commit
	 */
	private double commitRate(OutboxSystem.Kind kind, int n, int producers) {
		return this.bench.withDatabase((db) -> {
			try (OutboxSystem system = kind.start(db, Probe.tracking(n))) {
				Bench.sleep(300);
				long start = System.nanoTime();
				Bench.produceClosedLoop(system, n, producers);
				return n / ((System.nanoTime() - start) / 1e9);
			}
		});
	}

	/**
	 * Offer {@code rate} effects per second for {@code seconds} from {@code producers}
	 * threads (an open loop: arrivals do not wait for earlier commits).
	 * @return p50, p95, p99 on the JVM clock, then p50, p95, p99 on the database clock,
	 * in ms
	 */
	private double[] lagTrial(OutboxSystem.Kind kind, int rate, int seconds, int producers) {
		int n = rate * seconds;
		return this.bench.withDatabase((db) -> {
			try (HikariDataSource clock = RawJdbcSystem.pool(db, 8)) {
				Probe probe = Probe.lag(n, clock);
				try (OutboxSystem system = kind.start(db, probe)) {
					Bench.sleep(300);
					ExecutorService pool = Executors.newFixedThreadPool(producers);
					long interval = 1_000_000_000L / rate;
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
					// the first second (or fifth) warms up connections and code paths; it
					// is not measured
					int skip = Math.min(rate, n / 5);
					double[] jvm = probe.jvmLagsMillis(skip);
					double[] database = probe.dbLagsMillis(skip);
					return new double[] { Stats.percentile(jvm, 50), Stats.percentile(jvm, 95),
							Stats.percentile(jvm, 99), Stats.percentile(database, 50), Stats.percentile(database, 95),
							Stats.percentile(database, 99) };
				}
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new IllegalStateException("Interrupted", ex);
			}
		});
	}

}
