package io.ductor.benchmarks;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

import javax.sql.DataSource;

import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.modulith.events.ApplicationModuleListener;
import org.springframework.scheduling.annotation.EnableAsync;
import org.springframework.transaction.annotation.Transactional;

/**
 * Scenario 13: the same Spring Modulith application on Modulith's JDBC event publication
 * registry and on Ductor as that registry ({@code ductor-spring-modulith}). A
 * {@code @Transactional} service inserts an order row and publishes an event; an
 * {@code @ApplicationModuleListener} (its own transaction after the commit) inserts a
 * receipt row. Both timestamps are the database's: the order row's is {@code now()}, the
 * start of the publishing transaction; the receipt's is {@code clock_timestamp()} when
 * the listener inserts it. Measured: events per second end to end in a closed loop (the
 * first publishing transaction's start to the last receipt), and at a fixed offered load
 * the lag from each publishing transaction's start to its listener's receipt. Each system
 * runs with its defaults: Modulith's listener on Boot's task executor ({@code @Async}),
 * Ductor's on its drainer.
 */
final class ModulithListenerScenario {

	private static final String SCENARIO = "13 modulith listener";

	/** Offered load of the lag trials, events per second. */
	static final int RATE = 200;

	enum Kind {

		MODULITH("Spring Modulith, JDBC registry"), DUCTOR("Ductor as Modulith's registry (ductor-spring-modulith)");

		final String label;

		Kind(String label) {
			this.label = label;
		}

	}

	private final Bench bench;

	ModulithListenerScenario(Bench bench) {
		this.bench = bench;
	}

	void run() {
		Bench.progress("scenario 13: a Modulith application on Modulith's JDBC registry and on Ductor");
		int n = this.bench.options.effects();
		List<Kind> kinds = List.of(Kind.values());
		Map<Kind, List<double[]>> results = new LinkedHashMap<>();
		kinds.forEach((kind) -> results.put(kind, new ArrayList<>()));
		this.bench.alternate("modulith listener", kinds, (kind) -> kind.label, this.bench.options.trials(), (kind) -> {
			double throughput = this.bench.withDatabase((db) -> closedLoop(db, kind, n));
			double[] lag = this.bench.withDatabase((db) -> lagTrial(db, kind));
			results.get(kind).add(new double[] { throughput, lag[0], lag[1] });
			return throughput;
		});
		for (Kind kind : kinds) {
			this.bench.report.add(SCENARIO, kind.label, "events/s end to end (N=" + n + ")", "/s",
					column(results.get(kind), 0));
		}
		for (Kind kind : kinds) {
			this.bench.report.add(SCENARIO, kind.label, "lag transaction start→listener done p50 at " + RATE + "/s",
					"ms", column(results.get(kind), 1));
			this.bench.report.add(SCENARIO, kind.label, "lag transaction start→listener done p99 at " + RATE + "/s",
					"ms", column(results.get(kind), 2));
		}
		double modulith = median(column(results.get(Kind.MODULITH), 0));
		double ductor = median(column(results.get(Kind.DUCTOR), 0));
		this.bench.report.note("Scenario 13: Ductor as Modulith's registry ran at " + Report.ratio(ductor / modulith)
				+ " of Modulith's JDBC registry, events/s end to end; P=" + this.bench.options.producers()
				+ " publishing threads, each system with its defaults, database timestamps.");
	}

	private static List<Double> column(List<double[]> figures, int index) {
		return figures.stream().map((f) -> f[index]).toList();
	}

	private static double median(List<Double> values) {
		List<Double> sorted = values.stream().sorted().toList();
		int n = sorted.size();
		return (n % 2 == 1) ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
	}

	/**
	 * @return events per second from the first publishing transaction's start to the last
	 * receipt
	 */
	private double closedLoop(Db db, Kind kind, int n) {
		try (Running app = new Running(db, kind)) {
			app.warmUp();
			ExecutorService pool = Executors.newFixedThreadPool(this.bench.options.producers());
			AtomicInteger next = new AtomicInteger();
			for (int p = 0; p < this.bench.options.producers(); p++) {
				pool.execute(() -> {
					for (int seq = next.getAndIncrement(); seq < n; seq = next.getAndIncrement()) {
						app.orders.place(seq);
					}
				});
			}
			pool.shutdown();
			awaitTermination(pool);
			app.awaitReceipts(n);
			return app.jdbc
				.sql("SELECT ? / extract(epoch FROM (SELECT max(done_at) FROM bench_receipt WHERE seq >= 0) "
						+ "- (SELECT min(started_at) FROM bench_order WHERE seq >= 0))")
				.param(n)
				.query(Double.class)
				.single();
		}
	}

	/**
	 * Offers {@value #RATE} events per second for the lag seconds of the options (an open
	 * loop); the first second warms up and is not measured.
	 * @return p50 and p99 of transaction start to receipt, in ms
	 */
	private double[] lagTrial(Db db, Kind kind) {
		int n = RATE * this.bench.options.lagSeconds();
		try (Running app = new Running(db, kind)) {
			app.warmUp();
			ExecutorService pool = Executors.newFixedThreadPool(this.bench.options.producers());
			long interval = 1_000_000_000L / RATE;
			long start = System.nanoTime();
			for (int i = 0; i < n; i++) {
				long due = start + i * interval;
				for (long wait = due - System.nanoTime(); wait > 0; wait = due - System.nanoTime()) {
					LockSupport.parkNanos(wait);
				}
				int seq = i;
				pool.execute(() -> app.orders.place(seq));
			}
			pool.shutdown();
			awaitTermination(pool);
			app.awaitReceipts(n);
			int skip = Math.min(RATE, n / 5);
			return app.jdbc
				.sql("""
						SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY ms), percentile_cont(0.99) WITHIN GROUP (ORDER BY ms)
						FROM (SELECT extract(epoch FROM r.done_at - o.started_at) * 1000 AS ms
						      FROM bench_order o JOIN bench_receipt r USING (seq) WHERE o.seq >= ?) lags""")
				.param(skip)
				.query((rs, row) -> new double[] { rs.getDouble(1), rs.getDouble(2) })
				.single();
		}
	}

	private static void awaitTermination(ExecutorService pool) {
		try {
			if (!pool.awaitTermination(Bench.TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
				throw new IllegalStateException("Publishers did not finish");
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("Interrupted", ex);
		}
	}

	/** The application, on one system. */
	private static final class Running implements AutoCloseable {

		private final ConfigurableApplicationContext context;

		final Orders orders;

		final JdbcClient jdbc;

		Running(Db db, Kind kind) {
			List<String> properties = new ArrayList<>(List.of(db.datasourceProperties(DuctorSystem.POOL_SIZE)));
			properties.addAll(List.of("spring.main.banner-mode=off", "spring.main.log-startup-info=false",
					"spring.modulith.events.jdbc.schema-initialization.enabled=true"));
			if (kind == Kind.DUCTOR) {
				properties.addAll(DuctorSystem.extraProperties);
			}
			// the tables exist before the application starts
			try (var schema = db.pool(1)) {
				JdbcClient tables = JdbcClient.create(schema);
				tables.sql(
						"CREATE TABLE bench_order (seq int PRIMARY KEY, started_at timestamptz NOT NULL DEFAULT now())")
					.update();
				tables
					.sql("CREATE TABLE bench_receipt (seq int PRIMARY KEY, "
							+ "done_at timestamptz NOT NULL DEFAULT clock_timestamp())")
					.update();
			}
			Class<?> source = (kind == Kind.DUCTOR) ? OnDuctor.class : OnModulith.class;
			this.context = new SpringApplicationBuilder(source).web(WebApplicationType.NONE)
				.properties(properties.toArray(String[]::new))
				.run();
			this.orders = this.context.getBean(Orders.class);
			this.jdbc = JdbcClient.create(this.context.getBean(DataSource.class));
		}

		/** One event, not measured (negative seq): connections and code paths warm. */
		void warmUp() {
			this.orders.place(-1);
			awaitReceipts(0);
		}

		/** Wait until every non-negative seq below {@code n} has its receipt. */
		void awaitReceipts(int n) {
			long deadline = System.nanoTime() + Bench.TIMEOUT.toNanos();
			int warmUp = 1;
			while (count() < n + warmUp) {
				if (System.nanoTime() > deadline) {
					throw new IllegalStateException("Only " + (count() - warmUp) + " of " + n + " listeners ran");
				}
				Bench.sleep(20);
			}
		}

		private long count() {
			return this.jdbc.sql("SELECT count(*) FROM bench_receipt").query(Long.class).single();
		}

		@Override
		public void close() {
			this.context.close();
		}

	}

	/** The published event. */
	public record OrderPlaced(int seq) {
	}

	/** The publishing service. */
	public static class Orders {

		private final ApplicationEventPublisher events;

		private final JdbcClient jdbc;

		Orders(ApplicationEventPublisher events, JdbcClient jdbc) {
			this.events = events;
			this.jdbc = jdbc;
		}

		@Transactional
		public void place(int seq) {
			this.jdbc.sql("INSERT INTO bench_order (seq) VALUES (?)").param(seq).update();
			this.events.publishEvent(new OrderPlaced(seq));
		}

	}

	/**
	 * The transactional listener: a small insert (idempotent, as listeners run at least
	 * once).
	 */
	public static class Receipts {

		private final JdbcClient jdbc;

		Receipts(JdbcClient jdbc) {
			this.jdbc = jdbc;
		}

		@ApplicationModuleListener
		public void on(OrderPlaced event) {
			this.jdbc.sql("INSERT INTO bench_receipt (seq) VALUES (?) ON CONFLICT DO NOTHING")
				.param(event.seq())
				.update();
		}

	}

	/** The application's own beans, the same on both systems. */
	@Configuration(proxyBeanMethods = false)
	@EnableAsync
	static class Application {

		@Bean
		Orders orders(ApplicationEventPublisher events, DataSource dataSource) {
			return new Orders(events, JdbcClient.create(dataSource));
		}

		@Bean
		Receipts receipts(DataSource dataSource) {
			return new Receipts(JdbcClient.create(dataSource));
		}

	}

	@Configuration(proxyBeanMethods = false)
	@ImportModulithEvents
	@Import(Application.class)
	static class OnModulith {

	}

	@Configuration(proxyBeanMethods = false)
	@ImportDuctorModulithEvents
	@Import(Application.class)
	static class OnDuctor {

	}

}
