package io.ductor.benchmarks;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordedStackTrace;
import jdk.jfr.consumer.RecordedThread;
import jdk.jfr.consumer.RecordingFile;

/**
 * Scenario 0: what one producer's transaction costs in the producer's own thread, in
 * figures the load of the machine does not move: bytes allocated and CPU time per call
 * (from the JVM's per-thread counters), statements and round trips per intent (counted by
 * {@link CountingDriver} in a separate pass, so that its proxies cost nothing in the
 * first), and for Ductor's headline effect where that CPU time and those bytes go (JFR
 * execution and allocation samples of the producer threads, each sample charged to the
 * innermost step of the path on its stack).
 */
final class ProducerPathScenario {

	private static final String SCENARIO = "0 producer's path";

	private static final String THREAD_PREFIX = "bench-producer-";

	private final Bench bench;

	ProducerPathScenario(Bench bench) {
		this.bench = bench;
	}

	void run() {
		Options options = this.bench.options;
		int calls = options.producerCalls();
		int warmUp = calls;
		for (Shape shape : List.of(Shape.HEADLINE, Shape.MINIMAL)) {
			String label = (shape == Shape.HEADLINE) ? "headline effect" : "minimal effect";
			List<OutboxSystem.Kind> systems = List.of(DuctorSystem.kind(shape, 1),
					RawOutboxSystem.kind(RawOutboxSystem.Table.MINIMAL, shape), ModulithSystem.kind(shape));
			Map<OutboxSystem.Kind, List<double[]>> figures = new LinkedHashMap<>();
			systems.forEach((kind) -> figures.put(kind, new ArrayList<>()));
			this.bench.alternate(SCENARIO + ", " + label, systems, OutboxSystem.Kind::name, options.trials(),
					(kind) -> {
						double[] trial = this.bench
							.withDatabase((db) -> measure(kind, db, warmUp, calls, options.producers(), false));
						figures.get(kind).add(trial);
						return trial[0];
					});
			Report report = this.bench.report;
			if (shape == Shape.HEADLINE) {
				List<double[]> ductor = figures.get(systems.get(0));
				medianBytes = Stats.median(ductor.stream().map((f) -> f[0]).toList());
				medianCpu = Stats.median(ductor.stream().map((f) -> f[1]).toList());
			}
			for (OutboxSystem.Kind kind : systems) {
				String system = kind.name() + ", " + label;
				report.add(SCENARIO, system, "bytes allocated per call (producer thread)", "B",
						figures.get(kind).stream().map((f) -> f[0]).toList());
				report.add(SCENARIO, system, "CPU time per call (producer thread)", "µs",
						figures.get(kind).stream().map((f) -> f[1]).toList());
				double[] counted = this.bench.withDatabase((db) -> measure(kind, db.counting(), warmUp,
						Math.min(calls, 2_000), options.producers(), true));
				report.add(SCENARIO, system, "statements per call, as the driver sends them", "", List.of(counted[2]));
				report.add(SCENARIO, system, "round trips per call (statements, commit)", "", List.of(counted[3]));
			}
		}
		this.bench.report.section(profile(3 * calls, warmUp, options.producers()));
	}

	/**
	 * Ductor's headline figures per call, medians of the trials above: what the profile
	 * apportions.
	 */
	private double medianBytes;

	private double medianCpu;

	/**
	 * @return bytes and CPU µs per call, statements and round trips per call (these only
	 * when {@code counting})
	 */
	private double[] measure(OutboxSystem.Kind kind, Db db, int warmUp, int calls, int producers, boolean counting) {
		Probe probe = Probe.tracking(warmUp + calls);
		try (OutboxSystem system = kind.start(db, probe)) {
			Bench.sleep(300);
			run(system, 0, warmUp, producers, null);
			long[] totals = new long[4];
			run(system, warmUp, warmUp + calls, producers, (counting) ? totals : null);
			long[] cost = this.lastTotals;
			awaitDispatched(probe);
			return new double[] { cost[0] / (double) calls, cost[1] / 1e3 / calls, totals[2] / (double) calls,
					totals[3] / (double) calls };
		}
	}

	private long[] lastTotals = new long[2];

	/**
	 * Produce effects {@code from..to-1} from {@code producers} threads; their allocation
	 * and CPU time go to {@link #lastTotals}, and with {@code counts} their statements
	 * and round trips to {@code counts[2..3]}.
	 */
	private void run(OutboxSystem system, int from, int to, int producers, long[] counts) {
		if (from >= to) {
			return;
		}
		com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
		AtomicInteger next = new AtomicInteger(from);
		AtomicLong bytes = new AtomicLong();
		AtomicLong cpu = new AtomicLong();
		AtomicInteger number = new AtomicInteger();
		ExecutorService pool = Executors.newFixedThreadPool(producers, (task) -> {
			Thread thread = new Thread(task, THREAD_PREFIX + number.getAndIncrement());
			thread.setDaemon(true);
			return thread;
		});
		try {
			List<Future<?>> running = new ArrayList<>();
			for (int p = 0; p < producers; p++) {
				running.add(pool.submit(() -> {
					long[] sent = new long[2];
					if (counts != null) {
						CountingDriver.countOnThisThread(sent);
					}
					long bytesBefore = threads.getCurrentThreadAllocatedBytes();
					long cpuBefore = threads.getCurrentThreadCpuTime();
					for (int seq = next.getAndIncrement(); seq < to; seq = next.getAndIncrement()) {
						system.produce(seq);
					}
					cpu.addAndGet(threads.getCurrentThreadCpuTime() - cpuBefore);
					bytes.addAndGet(threads.getCurrentThreadAllocatedBytes() - bytesBefore);
					CountingDriver.stopCounting();
					if (counts != null) {
						synchronized (counts) {
							counts[2] += sent[0];
							counts[3] += sent[1];
						}
					}
				}));
			}
			for (Future<?> future : running) {
				future.get();
			}
		}
		catch (Exception ex) {
			throw new IllegalStateException("A producer failed", ex);
		}
		finally {
			pool.shutdownNow();
		}
		this.lastTotals = new long[] { bytes.get(), cpu.get() };
	}

	private static void awaitDispatched(Probe probe) {
		try {
			if (!probe.awaitAll(Bench.TIMEOUT)) {
				throw new IllegalStateException("Only " + probe.distinct() + " of " + probe.expected()
						+ " effects were dispatched within " + Bench.TIMEOUT);
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("Interrupted", ex);
		}
	}

	/**
	 * One more Ductor trial of the headline effect under JFR: where the CPU time and the
	 * bytes go.
	 */
	private String profile(int calls, int warmUp, int producers) {
		OutboxSystem.Kind kind = DuctorSystem.kind(Shape.HEADLINE, 1);
		Map<String, long[]> byStep = new LinkedHashMap<>();
		STEPS.forEach((step) -> byStep.put(step.name(), new long[2]));
		byStep.put(OTHER, new long[2]);
		double[] perCall = this.bench.withDatabase((db) -> {
			Probe probe = Probe.tracking(warmUp + calls);
			try (OutboxSystem system = kind.start(db, probe)) {
				Bench.sleep(300);
				run(system, 0, warmUp, producers, null);
				Path file = Files.createTempFile("ductor-producer-path", ".jfr");
				try (Recording recording = new Recording()) {
					recording.enable("jdk.ExecutionSample").withPeriod(Duration.ofMillis(1));
					recording.enable("jdk.ObjectAllocationSample").with("throttle", "10000/s");
					recording.start();
					run(system, warmUp, warmUp + calls, producers, null);
					recording.stop();
					recording.dump(file);
				}
				long[] totals = this.lastTotals;
				awaitDispatched(probe);
				for (RecordedEvent event : RecordingFile.readAllEvents(file)) {
					boolean cpu = event.getEventType().getName().equals("jdk.ExecutionSample");
					RecordedThread thread = event.getThread(cpu ? "sampledThread" : "eventThread");
					if (thread == null || thread.getJavaName() == null
							|| !thread.getJavaName().startsWith(THREAD_PREFIX)) {
						continue;
					}
					long[] counts = byStep.get(step(event.getStackTrace()));
					if (cpu) {
						counts[0]++;
					}
					else {
						counts[1] += event.getLong("weight");
					}
				}
				Files.deleteIfExists(file);
				return new double[] { totals[0] / (double) calls, totals[1] / 1e3 / calls };
			}
			catch (IOException ex) {
				throw new IllegalStateException("Cannot write or read the JFR recording", ex);
			}
		});
		long samples = byStep.values().stream().mapToLong((c) -> c[0]).sum();
		long weight = byStep.values().stream().mapToLong((c) -> c[1]).sum();
		StringBuilder out = new StringBuilder();
		out.append(String.format(Locale.ROOT,
				"Where the producer's path of the headline effect goes: Ductor, one more trial of %,d calls under JFR "
						+ "(%,d execution samples of the producer threads, %,d MB of sampled allocation; %.1f µs of CPU "
						+ "and %,.0f bytes per call in that trial, JFR's own cost included). Each step's share of the "
						+ "samples is applied to the medians of the trials above, %.1f µs and %,.0f bytes per call:%n%n",
				calls, samples, weight >> 20, perCall[1], perCall[0], this.medianCpu, this.medianBytes));
		out.append("| Step | CPU samples | CPU µs per call | Allocation share | Bytes per call |\n");
		out.append("|---|---:|---:|---:|---:|\n");
		for (Map.Entry<String, long[]> entry : byStep.entrySet()) {
			long[] c = entry.getValue();
			if (c[0] == 0 && c[1] == 0) {
				continue;
			}
			double cpuShare = (samples > 0) ? c[0] / (double) samples : 0;
			double allocShare = (weight > 0) ? c[1] / (double) weight : 0;
			out.append(String.format(Locale.ROOT, "| %s | %,d | %.1f | %.0f %% | %,.0f |%n", entry.getKey(), c[0],
					cpuShare * this.medianCpu, allocShare * 100, allocShare * this.medianBytes));
		}
		return out.toString();
	}

	private static final String OTHER = "everything else (the benchmark's producer loop, JIT, GC barriers)";

	/**
	 * One step of the producer's path: a sample belongs to the first step of
	 * {@link #STEPS} with a frame on its stack (the specific steps come first, the
	 * enclosing ones last).
	 */
	private record Step(String name, List<String> prefixes) {

		boolean matches(String frame) {
			for (String prefix : this.prefixes) {
				if (frame.startsWith(prefix)) {
					return true;
				}
			}
			return false;
		}

	}

	private static final List<Step> STEPS = List.of(
			new Step("fingerprint of name and payload (SHA-256)",
					List.of("io.ductor.effect.internal.EffectPayloads.fingerprint",
							"io.ductor.effect.internal.EffectPayloads$Arguments.fingerprint")),
			new Step("arguments to JSON, size and round-trip checks",
					List.of("io.ductor.effect.internal.EffectPayloads")),
			new Step("key expression (SpEL)",
					List.of("io.ductor.effect.internal.EffectWriter.evaluate",
							"io.ductor.effect.internal.EffectExpression")),
			new Step("INSERT: Spring JDBC, the driver, the round trip",
					List.of("io.ductor.effect.internal.IntentRecorder.insert")),
			new Step("other statements (key binding, ordering lock, notification)",
					List.of("io.ductor.effect.internal.IntentRecorder.")),
			new Step("after-commit work registered (synchronization, resource)",
					List.of("io.ductor.effect.internal.EffectWriter.onCommit",
							"io.ductor.effect.internal.EffectWriter.scheduled")),
			new Step("after commit: metrics, drainer wake-up, notifier", List.of(
					"org.springframework.transaction.support.AbstractPlatformTransactionManager.triggerAfterCompletion",
					"org.springframework.transaction.support.AbstractPlatformTransactionManager.triggerAfterCommit",
					"org.springframework.transaction.support.TransactionSynchronizationUtils.invokeAfter")),
			new Step("COMMIT: the driver and the round trip",
					List.of("org.springframework.jdbc.datasource.DataSourceTransactionManager.doCommit")),
			new Step("BEGIN: connection from the pool, auto-commit off",
					List.of("org.springframework.jdbc.datasource.DataSourceTransactionManager.doBegin")),
			new Step("connection back to the pool", List
				.of("org.springframework.jdbc.datasource.DataSourceTransactionManager.doCleanupAfterCompletion")),
			new Step("interceptor: finding the effect",
					List.of("io.ductor.effect.internal.DurableEffectInterceptor.",
							"io.ductor.effect.internal.EffectRegistry.", "io.ductor.effect.internal.EffectMethods.",
							"io.ductor.effect.internal.DurableEffectAdvisor")),
			new Step("recording: checks, key validation, tick lookup",
					List.of("io.ductor.effect.", "io.ductor.internal.Ids.", "io.ductor.run.Tick.")),
			new Step("Spring's proxies, @Transactional, the calling method", List.of("org.springframework.aop.",
					"org.springframework.transaction.", "io.ductor.benchmarks.DuctorSystem$")));

	private static String step(RecordedStackTrace stack) {
		if (stack == null) {
			return OTHER;
		}
		List<String> frames = new ArrayList<>();
		for (RecordedFrame frame : stack.getFrames()) {
			if (frame.isJavaFrame()) {
				frames.add(frame.getMethod().getType().getName() + "." + frame.getMethod().getName());
			}
		}
		for (Step step : STEPS) {
			for (String frame : frames) {
				if (step.matches(frame)) {
					return step.name();
				}
			}
		}
		return OTHER;
	}

}
