package io.ductor.benchmarks;

import java.util.ArrayList;
import java.util.List;
import java.util.StringJoiner;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import org.flywaydb.core.Flyway;

import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.transaction.support.TransactionTemplate;

import tools.jackson.databind.json.JsonMapper;

/**
 * The raw JDBC baseline: the same {@code eec_effect_intent} table (Ductor's own
 * migration), the intent inserted in the producer's transaction, and claim threads that
 * each take a batch with {@code FOR UPDATE SKIP LOCKED}, run the handlers and mark the
 * batch completed in that same transaction. No leases, fencing, retries, notifications or
 * metrics; a commit wakes the claim threads in this JVM, as Ductor's commit wakes its
 * local drainer.
 */
final class RawJdbcSystem implements OutboxSystem {

	static final int BATCH = 100;

	private static final long POLL_MILLIS = 1000;

	private final HikariDataSource dataSource;

	private final JdbcClient jdbc;

	private final TransactionTemplate tx;

	private final Probe probe;

	private final List<Thread> workers = new ArrayList<>();

	private final Object signal = new Object();

	private boolean woken;

	private volatile boolean running = true;

	private final Shape shape;

	private final JsonMapper mapper = JsonMapper.builder().build();

	RawJdbcSystem(Db db, Probe probe, int workers, boolean createSchema) {
		this(Shape.MINIMAL, db, probe, workers, createSchema);
	}

	RawJdbcSystem(Shape shape, Db db, Probe probe, int workers, boolean createSchema) {
		this.probe = probe;
		this.shape = shape;
		this.dataSource = pool(db, DuctorSystem.POOL_SIZE);
		if (createSchema) {
			createSchema(this.dataSource);
		}
		this.jdbc = JdbcClient.create(this.dataSource);
		this.tx = new TransactionTemplate(new DataSourceTransactionManager(this.dataSource));
		for (int i = 0; i < workers; i++) {
			Thread worker = new Thread(this::drain, "raw-drainer-" + i);
			worker.setDaemon(true);
			this.workers.add(worker);
			worker.start();
		}
	}

	static OutboxSystem.Kind kind(Shape shape, int workers) {
		return new OutboxSystem.Kind("raw JDBC", (db, probe) -> new RawJdbcSystem(shape, db, probe, workers, true));
	}

	static HikariDataSource pool(Db db, int size) {
		HikariConfig config = new HikariConfig();
		config.setJdbcUrl(db.url());
		config.setUsername(db.user());
		config.setPassword(db.password());
		config.setMaximumPoolSize(size);
		config.setMinimumIdle(size);
		config.setPoolName("raw-" + size);
		if (db.driverClassName() != null) {
			config.setDriverClassName(db.driverClassName());
		}
		return new HikariDataSource(config);
	}

	/**
	 * Creates Ductor's tables with Ductor's own migrations, as a pipeline running them
	 * itself does (their location and history table are documented), so both sides share
	 * one table shape. Flyway takes two connections from {@code dataSource}.
	 */
	static void createSchema(javax.sql.DataSource dataSource) {
		Flyway.configure(RawJdbcSystem.class.getClassLoader())
			.dataSource(dataSource)
			.locations("classpath:db/ductor/migration")
			.table("ductor_schema_history")
			.baselineOnMigrate(true)
			.baselineVersion("0")
			.load()
			.migrate();
	}

	@Override
	public void produce(int seq) {
		this.tx.executeWithoutResult((status) -> {
			this.probe.producing(seq);
			if (this.shape == Shape.HEADLINE) {
				// what an application's own outbox does: its key, the arguments as JSON,
				// one insert
				this.jdbc.sql("""
						INSERT INTO eec_effect_intent (effect_name, idempotency_key, payload, payload_fingerprint)
						VALUES ('bench.handle', ?, ?::jsonb, 'raw')""")
					.param(Shape.key(seq))
					.param(this.mapper.writeValueAsString(List.of((long) seq, Shape.KIND, Shape.body(seq))))
					.update();
			}
			else {
				this.jdbc.sql("""
						INSERT INTO eec_effect_intent (effect_name, idempotency_key, payload, payload_fingerprint)
						VALUES ('bench.noop', gen_random_uuid()::text, jsonb_build_array(?::bigint), 'raw')""")
					.param(seq)
					.update();
			}
			this.probe.beforeCommit(seq, this.jdbc);
			TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {

				@Override
				public void afterCommit() {
					wakeUp();
				}

			});
		});
	}

	@Override
	public long completedInDatabase() {
		return this.jdbc.sql("SELECT count(*) FROM eec_effect_intent WHERE status = 'completed'")
			.query(Long.class)
			.single();
	}

	@Override
	public void close() {
		this.running = false;
		wakeUp();
		for (Thread worker : this.workers) {
			try {
				worker.join(10_000);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		}
		this.dataSource.close();
	}

	private void drain() {
		while (this.running) {
			int claimed;
			try {
				claimed = this.tx.execute((status) -> claimDispatchComplete());
			}
			catch (RuntimeException ex) {
				if (this.running) {
					System.err.println("raw drainer: " + ex);
				}
				claimed = 0;
			}
			if (claimed < BATCH) {
				awaitSignal();
			}
		}
	}

	private int claimDispatchComplete() {
		List<long[]> batch = this.jdbc.sql("""
				SELECT id, payload::text FROM eec_effect_intent
				WHERE status = 'pending' AND next_attempt_at <= now()
				ORDER BY next_attempt_at, id
				LIMIT ?
				FOR UPDATE SKIP LOCKED""")
			.param(BATCH)
			.query((rs, row) -> new long[] { rs.getLong(1), seq(rs.getString(2)) })
			.list();
		if (batch.isEmpty()) {
			return 0;
		}
		StringJoiner ids = new StringJoiner(",", "{", "}");
		for (long[] row : batch) {
			this.probe.dispatched(row[1]);
			ids.add(Long.toString(row[0]));
		}
		this.jdbc.sql("""
				UPDATE eec_effect_intent SET status = 'completed', attempts = attempts + 1, updated_at = now(),
				    finished_at = now()
				WHERE id = ANY (?::bigint[])""").param(ids.toString()).update();
		return batch.size();
	}

	private void wakeUp() {
		synchronized (this.signal) {
			this.woken = true;
			this.signal.notifyAll();
		}
	}

	private void awaitSignal() {
		synchronized (this.signal) {
			if (!this.woken && this.running) {
				try {
					this.signal.wait(POLL_MILLIS);
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
					this.running = false;
				}
			}
			this.woken = false;
		}
	}

	/** {@code [42]} and {@code [42, "peerbench", "…"]} are effect 42. */
	private static long seq(String payload) {
		int end = payload.indexOf(',');
		return Long.parseLong(payload.substring(1, (end < 0) ? payload.length() - 1 : end).trim());
	}

}
