package io.ductor.benchmarks;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.function.ToDoubleFunction;

import io.ductor.test.TestDatabase;
import io.ductor.test.TestDatabases;

/**
 * What every scenario shares: options, the report, fresh databases and the trial loop.
 */
final class Bench {

	static final Duration TIMEOUT = Duration.ofMinutes(5);

	final Options options;

	final Report report;

	Bench(Options options, Report report) {
		this.options = options;
		this.report = report;
	}

	/** Run {@code work} on a fresh database, dropped afterwards. */
	<T> T withDatabase(Function<Db, T> work) {
		TestDatabase database = TestDatabases.create();
		try {
			return work.apply(Db.of(database));
		}
		finally {
			TestDatabases.drop(database);
		}
	}

	/**
	 * Run {@code trials} trials of each system, rotating the order every trial so that no
	 * system always runs first (or last) on a warm or tired server.
	 * @return each system's values, in run order
	 */
	<K> Map<K, List<Double>> alternate(String label, List<K> systems, Function<K, String> name, int trials,
			ToDoubleFunction<K> trial) {
		Map<K, List<Double>> results = new LinkedHashMap<>();
		systems.forEach((system) -> results.put(system, new ArrayList<>()));
		for (int t = 0; t < trials; t++) {
			for (int j = 0; j < systems.size(); j++) {
				K system = systems.get((j + t) % systems.size());
				double value = trial.applyAsDouble(system);
				results.get(system).add(value);
				progress(label + " trial " + (t + 1) + "/" + trials + ", " + name.apply(system) + ": "
						+ Report.format(value));
			}
		}
		return results;
	}

	static void progress(String line) {
		System.err.println("  .. " + line);
	}

	/**
	 * Commit {@code n} effects from {@code producers} threads as fast as they go (a
	 * closed loop).
	 */
	static void produceClosedLoop(OutboxSystem system, int n, int producers) {
		AtomicInteger next = new AtomicInteger();
		ExecutorService pool = Executors.newFixedThreadPool(producers);
		try {
			List<Future<?>> running = new ArrayList<>();
			for (int p = 0; p < producers; p++) {
				running.add(pool.submit(() -> {
					for (int seq = next.getAndIncrement(); seq < n; seq = next.getAndIncrement()) {
						system.produce(seq);
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
	}

	/**
	 * Wait until every effect was dispatched and the system recorded all of them as
	 * completed.
	 * @return the moment the last completion was seen, on the JVM clock
	 */
	static long awaitCompleted(OutboxSystem system, Probe probe) {
		try {
			if (!probe.awaitAll(TIMEOUT)) {
				throw new IllegalStateException("Only " + probe.distinct() + " of " + probe.expected()
						+ " effects were dispatched within " + TIMEOUT);
			}
			long deadline = System.nanoTime() + TIMEOUT.toNanos();
			while (system.completedInDatabase() < probe.expected()) {
				if (System.nanoTime() > deadline) {
					throw new IllegalStateException(
							"Not every dispatched effect was recorded as completed within " + TIMEOUT);
				}
				Thread.sleep(2);
			}
			return System.nanoTime();
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("Interrupted", ex);
		}
	}

	static void sleep(long millis) {
		try {
			Thread.sleep(millis);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("Interrupted", ex);
		}
	}

	/**
	 * @return transactions committed in {@code db} so far; backends flush their counts
	 * when they exit, so read it after the system under test closed its connections
	 */
	static long commits(Db db) {
		try (Connection connection = db.connect();
				Statement statement = connection.createStatement();
				java.sql.ResultSet row = statement
					.executeQuery("SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()")) {
			row.next();
			return row.getLong(1);
		}
		catch (SQLException ex) {
			throw new IllegalStateException("Cannot read pg_stat_database: " + ex.getMessage(), ex);
		}
	}

	/**
	 * Creates Ductor's tables with Ductor's own migrations, as a pipeline running them
	 * itself does (their location and history table are documented). Flyway takes two
	 * connections from {@code dataSource}.
	 */
	static void migrateDuctorSchema(javax.sql.DataSource dataSource) {
		org.flywaydb.core.Flyway.configure(Bench.class.getClassLoader())
			.dataSource(dataSource)
			.locations("classpath:db/ductor/migration")
			.table("ductor_schema_history")
			.baselineOnMigrate(true)
			.baselineVersion("0")
			.load()
			.migrate();
	}

	/**
	 * @return the lags {@code lagSql} gives (effect number, milliseconds) of the effects
	 * numbered {@code from} and up
	 */
	static double[] lagsMillis(Db db, String lagSql, int from) {
		try (Connection connection = db.connect();
				Statement statement = connection.createStatement();
				java.sql.ResultSet rows = statement.executeQuery(lagSql)) {
			List<Double> lags = new ArrayList<>();
			while (rows.next()) {
				if (rows.getInt(1) >= from) {
					lags.add(rows.getDouble(2));
				}
			}
			return lags.stream().mapToDouble(Double::doubleValue).toArray();
		}
		catch (SQLException ex) {
			throw new IllegalStateException("Cannot read the lags: " + ex.getMessage(), ex);
		}
	}

	static void execute(Db db, String... statements) {
		try (Connection connection = db.connect(); Statement statement = connection.createStatement()) {
			for (String sql : statements) {
				statement.execute(sql);
			}
		}
		catch (SQLException ex) {
			throw new IllegalStateException("Cannot run " + String.join("; ", statements) + ": " + ex.getMessage(), ex);
		}
	}

}
