package io.ductor.benchmarks;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * The command line of the benchmark: {@code --name=value} pairs, all optional.
 *
 * @param jdbcUrl the server to measure on; {@code null} starts an embedded PostgreSQL
 * @param jdbcUser the role (it must be allowed to create databases)
 * @param jdbcPassword its password, or {@code null}
 * @param scenarios which scenarios run, in this order
 * @param trials measured trials per system (medians are reported)
 * @param effects N, effects per end-to-end trial
 * @param producers P, producer threads
 * @param lagRate offered load of the lag scenario, effects per second
 * @param lagSeconds how long each lag trial offers that load
 * @param backlog intents in the backlog scenario
 * @param bigBacklog intents in the backlog drained by a separate JVM with a capped heap,
 * 0 to skip
 * @param bigBacklogHeap the heap cap of that JVM, for example {@code 256m}
 * @param ticks ticks per tick trial
 * @param producerCalls measured calls per trial of the producer's-path scenario
 * @param ductorProperties extra Spring properties of every Ductor instance
 * ({@code --ductor.x=y}), to measure other settings than the defaults
 * @param out a file the markdown report is also written to, or {@code null}
 * @param child internal: the role of a child JVM ({@code drain}), or {@code null}
 */
record Options(String jdbcUrl, String jdbcUser, String jdbcPassword, Set<String> scenarios, int trials, int effects,
		int producers, int lagRate, int lagSeconds, int backlog, int bigBacklog, String bigBacklogHeap, int ticks,
		int producerCalls, List<String> ductorProperties, String out, String child) {

	static final List<String> ALL_SCENARIOS = List.of("producer", "outbox", "outbox-minimal", "footprint",
			"insert-ladder", "lag", "backlog", "ticks", "idempotency", "scale-out", "idempotency-modes", "console",
			"tracing", "concurrency-limit", "limited-backlog-lag", "live-index", "kafka", "rabbit", "modulith");

	static final String USAGE = """
			Usage: java -jar ductor-benchmarks/target/ductor-benchmarks.jar [options]
			  --jdbc-url=URL          server to measure on (default: an embedded PostgreSQL, fsync off)
			  --jdbc-user=USER        role allowed to create databases (default postgres)
			  --jdbc-password=PW
			  --scenarios=a,b         any of %s (default: all)
			  --trials=3              measured trials per system; medians are reported
			  --quick                 smaller figures, one trial: a quick look, not for publishing
			  --effects=20000 --producers=8 --lag-rate=500 --lag-seconds=10
			  --backlog=100000 --big-backlog=1000000 --big-backlog-heap=256m --ticks=8000
			  --producer-calls=10000  measured calls per trial of the producer's-path scenario
			  --ductor.NAME=VALUE     a Ductor property for every Ductor instance (default: Ductor's defaults)
			  --out=FILE              also write the markdown report to FILE
			""".formatted(String.join(",", ALL_SCENARIOS));

	static Options parse(String... args) {
		String url = null;
		String user = null;
		String password = null;
		Set<String> scenarios = new LinkedHashSet<>(ALL_SCENARIOS);
		int trials = 3;
		int effects = 20_000;
		int producers = 8;
		int lagRate = 500;
		int lagSeconds = 10;
		int backlog = 100_000;
		int bigBacklog = 1_000_000;
		String heap = "256m";
		int ticks = 8_000;
		int producerCalls = 10_000;
		String out = null;
		String child = null;
		List<String> rest = new ArrayList<>();
		List<String> ductorProperties = new ArrayList<>();
		for (String arg : args) {
			if (arg.equals("--quick")) {
				trials = 1;
				effects = 5_000;
				lagSeconds = 4;
				backlog = 20_000;
				bigBacklog = 100_000;
				ticks = 2_000;
				producerCalls = 2_000;
				continue;
			}
			if (arg.equals("--help") || arg.equals("-h")) {
				throw new IllegalArgumentException("");
			}
			rest.add(arg);
		}
		for (String arg : rest) {
			int eq = arg.indexOf('=');
			if (!arg.startsWith("--") || eq < 0) {
				throw new IllegalArgumentException("Unknown argument '" + arg + "'");
			}
			String name = arg.substring(2, eq);
			String value = arg.substring(eq + 1);
			if (name.startsWith("ductor.")) {
				ductorProperties.add(name + "=" + value);
				continue;
			}
			switch (name) {
				case "jdbc-url" -> url = value;
				case "jdbc-user" -> user = value;
				case "jdbc-password" -> password = value;
				case "scenarios" -> scenarios = scenarios(value);
				case "trials" -> trials = positive(name, value);
				case "effects" -> effects = positive(name, value);
				case "producers" -> producers = positive(name, value);
				case "lag-rate" -> lagRate = positive(name, value);
				case "lag-seconds" -> lagSeconds = positive(name, value);
				case "backlog" -> backlog = positive(name, value);
				case "big-backlog" -> bigBacklog = Integer.parseInt(value);
				case "big-backlog-heap" -> heap = value;
				case "ticks" -> ticks = positive(name, value);
				case "producer-calls" -> producerCalls = positive(name, value);
				case "out" -> out = value;
				case "child" -> child = value;
				default -> throw new IllegalArgumentException("Unknown option --" + name);
			}
		}
		return new Options(url, user, password, scenarios, trials, effects, producers, lagRate, lagSeconds, backlog,
				bigBacklog, heap, ticks, producerCalls, List.copyOf(ductorProperties), out, child);
	}

	boolean runs(String scenario) {
		return this.scenarios.contains(scenario);
	}

	private static Set<String> scenarios(String value) {
		Set<String> chosen = new LinkedHashSet<>();
		for (String name : value.split(",")) {
			String trimmed = name.trim();
			if (!ALL_SCENARIOS.contains(trimmed)) {
				throw new IllegalArgumentException("Unknown scenario '" + trimmed + "'; choose from " + ALL_SCENARIOS);
			}
			chosen.add(trimmed);
		}
		return chosen;
	}

	private static int positive(String name, String value) {
		int parsed = Integer.parseInt(value);
		if (parsed < 1) {
			throw new IllegalArgumentException("--" + name + " must be at least 1 but was " + value);
		}
		return parsed;
	}

}
