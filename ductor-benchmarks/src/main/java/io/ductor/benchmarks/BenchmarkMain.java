package io.ductor.benchmarks;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.StringJoiner;

import io.ductor.test.TestDatabase;
import io.ductor.test.TestDatabases;

/**
 * Ductor's benchmark: one command, every system side by side in the same run, alternating
 * trials, medians and ratios. See {@code BENCHMARKS.md}.
 */
public final class BenchmarkMain {

	private static final String[] SETTINGS = { "server_version", "fsync", "synchronous_commit", "full_page_writes",
			"wal_level", "shared_buffers", "max_connections" };

	private BenchmarkMain() {
	}

	public static void main(String[] args) {
		Options options;
		try {
			options = Options.parse(args);
		}
		catch (IllegalArgumentException ex) {
			if (!ex.getMessage().isEmpty()) {
				System.err.println(ex.getMessage());
			}
			System.err.print(Options.USAGE);
			System.exit(2);
			return;
		}
		DuctorSystem.extraProperties = options.ductorProperties();
		if ("drain".equals(options.child())) {
			BacklogScenario.child(options);
			System.exit(0);
		}
		long start = System.nanoTime();
		String report = run(options, args);
		System.out.println();
		System.out.println(report);
		System.out.printf("Total time: %.0f s%n", (System.nanoTime() - start) / 1e9);
		if (options.out() != null) {
			try {
				Files.writeString(Path.of(options.out()), report, StandardCharsets.UTF_8);
			}
			catch (IOException ex) {
				System.err.println("Cannot write " + options.out() + ": " + ex);
			}
		}
		// the embedded server, if any, stops in a shutdown hook
		System.exit(0);
	}

	/** Run the chosen scenarios and render the report, header included. */
	static String run(Options options, String... args) {
		String startLoad = loadAverage();
		chooseServer(options);
		DuctorSystem.extraProperties = options.ductorProperties();
		Report report = new Report();
		Bench bench = new Bench(options, report);
		String header = header(options, args);
		System.err.print(header);
		if (options.runs("producer")) {
			new ProducerPathScenario(bench).run();
		}
		OutboxScenarios outbox = new OutboxScenarios(bench);
		if (options.runs("outbox") || options.runs("outbox-minimal") || options.runs("footprint")
				|| options.runs("insert-ladder") || options.runs("lag") || options.runs("scale-out")
				|| options.runs("tracing") || options.runs("live-index")) {
			outbox.warmUp();
		}
		if (options.runs("outbox")) {
			outbox.endToEnd(Shape.HEADLINE);
		}
		if (options.runs("outbox-minimal")) {
			outbox.endToEnd(Shape.MINIMAL);
		}
		if (options.runs("footprint")) {
			outbox.footprint();
		}
		if (options.runs("insert-ladder")) {
			outbox.insertLadder();
		}
		if (options.runs("tracing")) {
			outbox.tracing();
		}
		if (options.runs("lag")) {
			outbox.lag();
		}
		if (options.runs("live-index")) {
			new LiveIndexScenario(bench).run();
		}
		if (options.runs("backlog")) {
			new BacklogScenario(bench).run();
		}
		if (options.runs("ticks")) {
			new TickScenario(bench).run();
		}
		if (options.runs("idempotency")) {
			new IdempotencyScenario(bench).run();
		}
		if (options.runs("scale-out")) {
			outbox.scaleOut();
		}
		if (options.runs("idempotency-modes")) {
			new IdempotencyModesScenario(bench).run();
		}
		if (options.runs("console")) {
			new ConsoleScenario(bench).run();
		}
		if (options.runs("concurrency-limit")) {
			new ConcurrencyLimitScenario(bench).run();
		}
		if (options.runs("limited-backlog-lag")) {
			new LimitedBacklogLagScenario(bench).run();
		}
		if (options.runs("kafka")) {
			new KafkaScenario(bench).run();
		}
		if (options.runs("rabbit")) {
			new RabbitScenario(bench).run();
		}
		if (options.runs("modulith")) {
			new ModulithListenerScenario(bench).run();
		}
		report.note("Load average (1, 5, 15 min) at the start: " + startLoad + "; at the end: " + loadAverage()
				+ ". Anything else running on the machine shows here; ratios come from alternating trials of the same run.");
		return header + "\n" + report.markdown();
	}

	private static void chooseServer(Options options) {
		if (options.jdbcUrl() != null) {
			System.setProperty("DUCTOR_TEST_JDBC_URL", options.jdbcUrl());
			System.setProperty("DUCTOR_TEST_JDBC_USER", (options.jdbcUser() != null) ? options.jdbcUser() : "postgres");
			if (options.jdbcPassword() != null) {
				System.setProperty("DUCTOR_TEST_JDBC_PASSWORD", options.jdbcPassword());
			}
		}
		else if (System.getProperty("DUCTOR_TEST_JDBC_URL") == null && System.getenv("DUCTOR_TEST_JDBC_URL") == null) {
			// the default is the embedded server, never a container that happens to be
			// reachable
			System.setProperty("DUCTOR_TEST_DOCKER", "false");
		}
	}

	private static String header(Options options, String... args) {
		StringJoiner out = new StringJoiner("\n", "", "\n");
		out.add("Ductor benchmark, " + Instant.now().truncatedTo(ChronoUnit.SECONDS));
		out.add("");
		out.add("- Command arguments: `" + String.join(" ", args) + "`");
		out.add("- Server: " + TestDatabases.describeServer());
		out.add("- PostgreSQL settings: " + serverSettings());
		Runtime runtime = Runtime.getRuntime();
		out.add("- Machine: " + runtime.availableProcessors() + " CPUs, "
				+ (((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
					.getTotalMemorySize() >> 30)
				+ " GB RAM, " + System.getProperty("os.name") + " " + System.getProperty("os.version") + ", Java "
				+ System.getProperty("java.runtime.version") + ", max heap " + (runtime.maxMemory() >> 20) + " MB");
		out.add("- Trials per system: " + options.trials() + " (alternating order, median reported); N="
				+ options.effects() + ", P=" + options.producers() + ", Ductor with "
				+ (options.ductorProperties().isEmpty() ? "default settings"
						: String.join(" ", options.ductorProperties()))
				+ ", pools of " + DuctorSystem.POOL_SIZE + " connections, the raw outbox's drainer one thread taking "
				+ RawOutboxSystem.BATCH + " at a time");
		return out.toString();
	}

	/**
	 * @return the load average of 1, 5 and 15 minutes, comma-separated
	 */
	static String loadAverage() {
		try {
			String[] fields = Files.readString(Path.of("/proc/loadavg")).trim().split(" ");
			return fields[0] + ", " + fields[1] + ", " + fields[2];
		}
		catch (IOException | RuntimeException ex) {
			return String.format(java.util.Locale.ROOT, "%.2f (1 min)",
					ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
		}
	}

	private static String serverSettings() {
		TestDatabase database = TestDatabases.create();
		try (Connection connection = database.connect(); Statement statement = connection.createStatement()) {
			StringJoiner settings = new StringJoiner(", ");
			for (String name : SETTINGS) {
				try (ResultSet row = statement.executeQuery("SHOW " + name)) {
					row.next();
					settings.add(name + "=" + row.getString(1));
				}
			}
			return settings.toString();
		}
		catch (SQLException ex) {
			return "unknown (" + ex.getMessage() + ")";
		}
		finally {
			TestDatabases.drop(database);
		}
	}

}
