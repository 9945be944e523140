package io.ductor.benchmarks;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariDataSource;

import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.annotation.EnableTransactionManagement;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.transaction.support.TransactionTemplate;

import tools.jackson.databind.json.JsonMapper;

/**
 * The raw outbox: what an application writes by hand, the floor every outbox is measured
 * against. The producer's {@code @Transactional} method inserts one row; one drainer
 * thread takes a batch and stamps it done in one statement
 * ({@code UPDATE … WHERE id IN (SELECT … ORDER BY id LIMIT n FOR UPDATE SKIP LOCKED) RETURNING payload}),
 * calls the same in-JVM receiver as the other systems for each row, and commits: one
 * insert per effect and one update per batch, at least once (a crash before the commit
 * leaves the batch undone). A commit wakes the drainer in this JVM, which also polls. No
 * key, lease, fencing, retry, notification or metric.
 * <p>
 * {@link Table} says which table it drives: its own minimal one, with or without its
 * partial index, with a unique key, Ductor's row and table step by step (scenario 1g),
 * or, as a diagnostic of what the schema alone costs, Ductor's {@code eec_effect_intent}
 * as migrated, with the same statements.
 */
final class RawOutboxSystem implements OutboxSystem {

	static final int BATCH = 100;

	private static final long POLL_MILLIS = 1000;

	/** The table the raw outbox drives, and its statements. */
	enum Table {

		/**
		 * Its own table ({@code bigserial} key, {@code jsonb} payload,
		 * {@code created_at}, {@code done_at}) with one partial index on the undone rows.
		 */
		MINIMAL("raw outbox"),

		/** The same table without the partial index. */
		MINIMAL_WITHOUT_INDEX("raw outbox, no index"),

		/**
		 * The minimal table with a unique idempotency key, inserted
		 * {@code ON CONFLICT DO NOTHING}: the first of the guarantees an outbox of
		 * effects needs.
		 */
		KEYED("raw outbox with a unique key"),

		/**
		 * Ductor's {@code eec_effect_intent} as migrated, then stripped of every index
		 * but its primary and unique keys and of its generated columns, with the columns
		 * Ductor's insert of a due intent writes: what Ductor's row costs.
		 */
		DUCTOR_ROW("Ductor's row by hand, primary and unique keys only"),

		/** As {@link #DUCTOR_ROW}, its generated columns kept. */
		DUCTOR_ROW_GENERATED("Ductor's row by hand, with its generated columns"),

		/** Ductor's table as migrated, every index, Ductor's insert of a due intent. */
		DUCTOR_TABLE("Ductor's table as migrated, its insert by hand"),

		/**
		 * Ductor's {@code eec_effect_intent} as its migrations create it (every index),
		 * driven by the same statements: what the schema costs apart from Ductor's
		 * protocol. A diagnostic, never a baseline.
		 */
		DUCTOR_SCHEMA("Ductor's schema by hand (diagnostic)");

		private final String label;

		Table(String label) {
			this.label = label;
		}

		String label() {
			return this.label;
		}

		/** Whether it is Ductor's table rather than the raw outbox's own. */
		private boolean ductors() {
			return this.ordinal() >= DUCTOR_ROW.ordinal();
		}

		/** Whether it inserts the columns Ductor's insert of a due intent writes. */
		boolean ductorsInsert() {
			return ductors() && this != DUCTOR_SCHEMA;
		}

		void create(DataSource dataSource) {
			JdbcTemplate jdbc = new JdbcTemplate(dataSource);
			if (ductors()) {
				Bench.migrateDuctorSchema(dataSource);
				if (this == DUCTOR_ROW || this == DUCTOR_ROW_GENERATED) {
					jdbc.execute("""
							DO $$ DECLARE r record; BEGIN
							FOR r IN SELECT indexrelid::regclass::text AS name FROM pg_index
							         WHERE indrelid = 'eec_effect_intent'::regclass AND NOT EXISTS (
							             SELECT 1 FROM pg_constraint WHERE conindid = indexrelid) LOOP
							    EXECUTE 'DROP INDEX ' || r.name;
							END LOOP; END $$""");
				}
				if (this == DUCTOR_ROW) {
					jdbc.execute("""
							DO $$ DECLARE r record; BEGIN
							FOR r IN SELECT column_name FROM information_schema.columns
							         WHERE table_name = 'eec_effect_intent' AND is_generated = 'ALWAYS' LOOP
							    EXECUTE format('ALTER TABLE eec_effect_intent DROP COLUMN %I CASCADE', r.column_name);
							END LOOP; END $$""");
				}
				return;
			}
			jdbc.execute("""
					CREATE TABLE bench_outbox (
					    id         bigserial   PRIMARY KEY,%s
					    payload    jsonb       NOT NULL,
					    created_at timestamptz NOT NULL DEFAULT now(),
					    done_at    timestamptz)"""
				.formatted((this == KEYED) ? "\n    idempotency_key text NOT NULL UNIQUE," : ""));
			if (this != MINIMAL_WITHOUT_INDEX) {
				jdbc.execute("CREATE INDEX bench_outbox_undone_idx ON bench_outbox (id) WHERE done_at IS NULL");
			}
		}

		/**
		 * Inserts one row: for the raw outbox its payload (and key), for Ductor's table
		 * its effect name, key and payload (and fingerprint).
		 */
		String insertSql() {
			if (this == DUCTOR_SCHEMA) {
				return """
						INSERT INTO eec_effect_intent (effect_name, idempotency_key, payload, payload_fingerprint)
						VALUES (?, ?, ?::jsonb, 'raw')""";
			}
			if (ductorsInsert()) {
				return """
						INSERT INTO eec_effect_intent (effect_name, idempotency_key, payload, payload_fingerprint,
						    receiver, max_attempts, next_attempt_at)
						VALUES (?, ?, ?::jsonb, ?, 'IDEMPOTENT', 10, ductor_now())
						ON CONFLICT (idempotency_key) DO NOTHING
						RETURNING id""";
			}
			return (this == KEYED) ? """
					INSERT INTO bench_outbox (idempotency_key, payload) VALUES (?, ?::jsonb)
					ON CONFLICT (idempotency_key) DO NOTHING"""
					: "INSERT INTO bench_outbox (payload) VALUES (?::jsonb)";
		}

		/** Takes a batch, stamps it done and returns the payloads, in one statement. */
		String drainSql() {
			return ductors() ? """
					UPDATE eec_effect_intent SET status = 'completed', attempts = attempts + 1, updated_at = now(),
					    finished_at = now()
					WHERE id IN (SELECT id FROM eec_effect_intent
					             WHERE status = 'pending' AND next_attempt_at <= now()
					             ORDER BY next_attempt_at, id LIMIT %d FOR UPDATE SKIP LOCKED)
					RETURNING payload::text""".formatted(BATCH) : """
					UPDATE bench_outbox SET done_at = now()
					WHERE id IN (SELECT id FROM bench_outbox WHERE done_at IS NULL
					             ORDER BY id LIMIT %d FOR UPDATE SKIP LOCKED)
					RETURNING payload::text""".formatted(BATCH);
		}

		String completedSql() {
			return ductors() ? "SELECT count(*) FROM eec_effect_intent WHERE status = 'completed'"
					: "SELECT count(*) FROM bench_outbox WHERE done_at IS NOT NULL";
		}

		/**
		 * Each effect's number and the time from its producer's transaction start to the
		 * stamp of its completion, in ms.
		 */
		String lagSql() {
			return ductors()
					? "SELECT (payload->>0)::int, extract(epoch FROM finished_at - created_at) * 1000 FROM eec_effect_intent"
					: "SELECT (payload->>0)::int, extract(epoch FROM done_at - created_at) * 1000 FROM bench_outbox";
		}

		/** Fills a backlog of {@code n} undone rows of the minimal effect's payload. */
		String fillSql(int n) {
			if (ductors()) {
				return """
						INSERT INTO eec_effect_intent (effect_name, idempotency_key, payload, payload_fingerprint)
						SELECT 'bench.noop', 'backlog-' || g, jsonb_build_array(g), 'backlog'
						FROM generate_series(0, %d) AS g""".formatted(n - 1);
			}
			return ((this == KEYED) ? """
					INSERT INTO bench_outbox (idempotency_key, payload)
					SELECT 'backlog-' || g, jsonb_build_array(g) FROM generate_series(0, %d) AS g"""
					: "INSERT INTO bench_outbox (payload) SELECT jsonb_build_array(g) FROM generate_series(0, %d) AS g")
				.formatted(n - 1);
		}

		String tableName() {
			return ductors() ? "eec_effect_intent" : "bench_outbox";
		}

	}

	private final Table table;

	private final Shape shape;

	private final HikariDataSource dataSource;

	private final AnnotationConfigApplicationContext context;

	private final Producer producer;

	private final JdbcClient jdbc;

	private final TransactionTemplate tx;

	private final Probe probe;

	private final Thread drainer;

	private final Object signal = new Object();

	private boolean woken;

	private volatile boolean running = true;

	private final JsonMapper mapper = JsonMapper.builder().build();

	/**
	 * @param drain whether its drainer runs ({@code false}: the producers alone)
	 * @param createTable whether to create the table ({@code false}: it exists, filled)
	 */
	RawOutboxSystem(Table table, Shape shape, Db db, Probe probe, boolean drain, boolean createTable) {
		this.table = table;
		this.shape = shape;
		this.probe = probe;
		this.dataSource = db.pool(DuctorSystem.POOL_SIZE);
		if (createTable) {
			table.create(this.dataSource);
		}
		this.context = new AnnotationConfigApplicationContext();
		this.context.registerBean(RawOutboxSystem.class, () -> this);
		this.context.registerBean(DataSource.class, () -> this.dataSource);
		this.context.register(Infrastructure.class);
		this.context.refresh();
		this.producer = this.context.getBean(Producer.class);
		this.jdbc = JdbcClient.create(this.dataSource);
		this.tx = new TransactionTemplate(this.context.getBean(PlatformTransactionManager.class));
		this.drainer = new Thread(this::drain, "raw-outbox-drainer");
		this.drainer.setDaemon(true);
		if (drain) {
			this.drainer.start();
		}
	}

	static OutboxSystem.Kind kind(Table table, Shape shape) {
		return new OutboxSystem.Kind(table.label(),
				(db, probe) -> new RawOutboxSystem(table, shape, db, probe, true, true));
	}

	/** The producers of the raw outbox with nobody draining: the ceiling. */
	static OutboxSystem.Kind producersAlone(Shape shape) {
		return producersAlone(Table.MINIMAL, shape);
	}

	/** The producers of {@code table} with nobody draining. */
	static OutboxSystem.Kind producersAlone(Table table, Shape shape) {
		return new OutboxSystem.Kind(table.label() + " producers alone",
				(db, probe) -> new RawOutboxSystem(table, shape, db, probe, false, true));
	}

	@Override
	public void produce(int seq) {
		this.producer.publish(seq);
	}

	/** The producer's transaction: one insert; its commit wakes the drainer. */
	void insert(int seq) {
		this.probe.producing(seq);
		String payload = this.mapper.writeValueAsString((this.shape == Shape.HEADLINE)
				? List.of((long) seq, Shape.KIND, Shape.body(seq)) : List.of((long) seq));
		String key = (this.shape == Shape.HEADLINE) ? Shape.key(seq) : java.util.UUID.randomUUID().toString();
		JdbcClient.StatementSpec insert = this.jdbc.sql(this.table.insertSql());
		if (this.table.ductors()) {
			insert = insert.param(this.shape.effectName()).param(key);
		}
		else if (this.table == Table.KEYED) {
			insert = insert.param(key);
		}
		insert = insert.param(payload);
		if (this.table.ductorsInsert()) {
			insert.param(fingerprint(payload)).query(Long.class).optional();
		}
		else {
			insert.update();
		}
		TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {

			@Override
			public void afterCommit() {
				wakeUp();
			}

		});
	}

	/** A SHA-256 of the effect name and payload, in hex, as Ductor's fingerprint is. */
	private String fingerprint(String payload) {
		try {
			MessageDigest digest = MessageDigest.getInstance("SHA-256");
			digest.update(this.shape.effectName().getBytes(StandardCharsets.UTF_8));
			digest.update((byte) 0);
			return HexFormat.of().formatHex(digest.digest(payload.getBytes(StandardCharsets.UTF_8)));
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException(ex);
		}
	}

	@Override
	public long completedInDatabase() {
		return this.jdbc.sql(this.table.completedSql()).query(Long.class).single();
	}

	@Override
	public String lagSql() {
		return this.table.lagSql();
	}

	@Override
	public void close() {
		this.running = false;
		wakeUp();
		try {
			this.drainer.join(10_000);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		this.context.close();
		this.dataSource.close();
	}

	private void drain() {
		String sql = this.table.drainSql();
		while (this.running) {
			int taken;
			try {
				taken = this.tx.execute((status) -> {
					List<String> payloads = this.jdbc.sql(sql).query(String.class).list();
					for (String payload : payloads) {
						this.probe.dispatched(this.mapper.readTree(payload).get(0).asLong());
					}
					return payloads.size();
				});
			}
			catch (RuntimeException ex) {
				if (this.running) {
					System.err.println("raw outbox drainer: " + ex);
				}
				taken = 0;
			}
			if (taken < BATCH) {
				awaitSignal();
			}
		}
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

	/** The application's service: records the effect in its own transaction. */
	public static class Producer {

		private final RawOutboxSystem system;

		Producer(RawOutboxSystem system) {
			this.system = system;
		}

		@Transactional
		public void publish(int seq) {
			this.system.insert(seq);
		}

	}

	@Configuration(proxyBeanMethods = false)
	@EnableTransactionManagement
	static class Infrastructure {

		@Bean
		DataSourceTransactionManager transactionManager(DataSource dataSource) {
			return new DataSourceTransactionManager(dataSource);
		}

		@Bean
		Producer producer(RawOutboxSystem system) {
			return new Producer(system);
		}

	}

}
