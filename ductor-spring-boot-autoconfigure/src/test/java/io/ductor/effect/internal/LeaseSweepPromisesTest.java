package io.ductor.effect.internal;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import com.zaxxer.hikari.HikariDataSource;
import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.DelegatingDataSource;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.support.TransactionTemplate;

import io.ductor.effect.Receiver;
import io.ductor.effect.internal.IntentClaims.ClaimedIntent;
import io.ductor.effect.internal.IntentRecorder.NewIntent;
import io.ductor.jdbc.internal.DuctorSchema;
import io.ductor.metrics.internal.DuctorBacklog;
import io.ductor.test.TestDatabase;
import io.ductor.test.TestDatabases;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Promises of the reconciler's sweep ({@link LeaseSweep}) and of the in-flight count read
 * past its watermark, as docs/internals.md and docs/operations.md state them, on real
 * PostgreSQL.
 */
class LeaseSweepPromisesTest {

	static final Duration SHORT = Duration.ofMillis(100);

	static final Duration LONG = Duration.ofMinutes(5);

	static TestDatabase database;

	static HikariDataSource dataSource;

	static IntentRecorder recorder;

	static TransactionTemplate tx;

	static JdbcClient jdbc;

	@BeforeAll
	static void start() {
		database = TestDatabases.create();
		dataSource = database.newDataSource(4);
		Flyway.configure()
			.dataSource(dataSource)
			.locations(DuctorSchema.LOCATION)
			.table(DuctorSchema.HISTORY_TABLE)
			.load()
			.migrate();
		recorder = new IntentRecorder(dataSource);
		tx = new TransactionTemplate(new DataSourceTransactionManager(dataSource));
		jdbc = JdbcClient.create(dataSource);
	}

	@AfterAll
	static void stop() {
		if (dataSource != null) {
			dataSource.close();
		}
		if (database != null) {
			TestDatabases.drop(database);
		}
	}

	@BeforeEach
	void settleEverything() {
		// each test starts from no lease in flight and the watermark at the server's
		// oldest running transaction
		jdbc.sql("UPDATE eec_effect_intent SET status = 'completed', lease_owner = NULL WHERE status = 'in_flight'")
			.update();
		jdbc.sql("UPDATE eec_effect_lease_sweep SET lease_xid = 0, intent_id = 0 WHERE name = 'intents'").update();
		new IntentRedrive(dataSource).sweep(10_000, List.of(), List.of());
	}

	/**
	 * A database moved to another server with {@code pg_dump}/{@code pg_restore}, or
	 * upgraded through logical replication, keeps its rows (the watermark row too) but
	 * not the transaction ids of its old server: the new server's ids can be far below
	 * the watermark it brought along. Every lease taken there must still be redriven once
	 * it expires, as operations.md promises of a crash ("the reconciler of any instance
	 * then redrives them").
	 */
	@Test
	void anExpiredLeaseIsRedrivenAfterTheDatabaseMovedToAServerWithLowerTransactionIds() {
		simulateRestoreFromServerWithMoreTransactions();
		long crashed = recordLeased("crashed-" + UUID.randomUUID(), SHORT);
		awaitExpired(crashed);
		IntentRedrive reconciler = new IntentRedrive(dataSource);
		reconciler.redriveExpired(500, List.of(), List.of());
		reconciler.redriveExpired(500, List.of(), List.of());
		assertThat(status(crashed)).as("expired lease after two reconciler rounds").isEqualTo("pending");
	}

	/**
	 * The backlog's in-flight count ("intents being dispatched") must equal a plain count
	 * of the intents in flight, on a database moved to another server as above.
	 */
	@Test
	void theInFlightCountEqualsThePlainCountAfterTheDatabaseMovedToAServerWithLowerTransactionIds() {
		simulateRestoreFromServerWithMoreTransactions();
		recordLeased("running-" + UUID.randomUUID(), LONG);
		long plain = jdbc.sql("SELECT count(*) FROM eec_effect_intent WHERE status = 'in_flight'")
			.query(Long.class)
			.single();
		assertThat(plain).isEqualTo(1);
		DuctorBacklog backlog = new DuctorBacklog(dataSource, Duration.ZERO, 1000);
		assertThat(backlog.refresh().inFlight()).isEqualTo(plain);
	}

	/**
	 * docs/internals.md: "a younger running one stops the walk, which resumes there next
	 * round". With more young running leases than the round's limit, the round's steps
	 * walk those same leases again and again (one statement per lease after the first
	 * step), up to the sweep's hundred steps, each its own transaction that locks the
	 * watermark, in every reconciler round while they run.
	 */
	@Test
	void aYoungRunningLeaseStopsTheWalkUntilTheNextRound() throws Exception {
		int limit = 10;
		for (int i = 0; i < 3 * limit; i++) {
			recordLeased("young-" + UUID.randomUUID(), LONG);
		}
		// the sweep's clock stands at the moment the leases were taken: all of them are
		// running and younger than the hand-over's second, for as long as the test takes
		OffsetDateTime taken = jdbc.sql("SELECT max(updated_at) FROM eec_effect_intent")
			.query(OffsetDateTime.class)
			.single();
		try (HikariDataSource clocked = database.newDataSource(1)) {
			CountingDataSource counting = new CountingDataSource(clocked, taken);
			LeaseSweep sweep = new LeaseSweep(new JdbcTemplate(counting));
			assertThat(sweep.sweep(limit, List.of(), List.of())).isEmpty();
			assertThat(jdbc.sql("SELECT count(*) FROM eec_effect_intent WHERE status = 'in_flight' AND lease_swept")
				.query(Long.class)
				.single()).as("every young lease is still the sweep's").isEqualTo(3L * limit);
			assertThat(counting.connections.get())
				.as("transactions of one round over %d young running leases", 3 * limit)
				.isLessThanOrEqualTo(3);
		}
	}

	/**
	 * A lease recorded inside a savepoint (a nested transaction of the application) of a
	 * transaction that stays open across reconciler rounds, while later transactions
	 * commit leases that the rounds walk past: once the outer transaction commits and the
	 * lease expires, the next round redrives it (its lease carries the top-level id,
	 * which the server's snapshot lists as running until it ends).
	 */
	@Test
	void anExpiredLeaseRecordedInASavepointIsRedrivenOnceItsTransactionCommits() throws Exception {
		IntentRedrive reconciler = new IntentRedrive(dataSource);
		TransactionTemplate nested = new TransactionTemplate(tx.getTransactionManager());
		nested.setPropagationBehavior(TransactionDefinition.PROPAGATION_NESTED);
		CountDownLatch recorded = new CountDownLatch(1);
		CountDownLatch commit = new CountDownLatch(1);
		String key = "nested-" + UUID.randomUUID();
		CompletableFuture<Long> producer = CompletableFuture.supplyAsync(() -> tx.execute((outer) -> {
			long id = nested.execute((inner) -> recorder.insertLeased(intent(key), "instance-a", SHORT).id());
			recorded.countDown();
			await().atMost(Duration.ofSeconds(20)).until(() -> commit.getCount() == 0);
			return id;
		}));
		assertThat(recorded.await(20, TimeUnit.SECONDS)).isTrue();
		for (int i = 0; i < 3; i++) {
			recordLeased("after-" + UUID.randomUUID(), SHORT);
		}
		await().atMost(Duration.ofSeconds(10))
			.until(() -> jdbc
				.sql("SELECT count(*) FROM eec_effect_intent WHERE status = 'in_flight' "
						+ "AND idempotency_key LIKE 'after-%' AND lease_expires_at >= ductor_now()")
				.query(Long.class)
				.single() == 0);
		reconciler.redriveExpired(500, List.of(), List.of());
		reconciler.redriveExpired(500, List.of(), List.of());
		commit.countDown();
		long crashed = producer.get(20, TimeUnit.SECONDS);
		awaitExpired(crashed);
		reconciler.redriveExpired(500, List.of(), List.of());
		assertThat(status(crashed)).as("expired lease recorded in a savepoint, after its transaction committed")
			.isEqualTo("pending");
	}

	/**
	 * operations.md: a reconciler whose instance restarts while a transaction stays open
	 * walks again the leases committed since that transaction began, at most a hundred
	 * steps of its batch size a round, so an expired lease behind N of them is redriven
	 * within N / (100 × batch size) rounds more (here a batch size of 2 and 300 leases:
	 * two rounds), never lost.
	 */
	@Test
	void anExpiredLeaseIsRedrivenWithinTheDocumentedRoundsOfARestartedReconcilerWhileATransactionStaysOpen()
			throws Exception {
		try (Connection open = database.connect()) {
			open.setAutoCommit(false);
			try (Statement statement = open.createStatement()) {
				statement.execute("SELECT txid_current()");
			}
			tx.executeWithoutResult((status) -> {
				for (int i = 0; i < 300; i++) {
					recorder.insertLeased(intent("done-" + UUID.randomUUID()), "instance-a", LONG);
				}
			});
			jdbc.sql("UPDATE eec_effect_intent SET status = 'completed', lease_owner = NULL "
					+ "WHERE status = 'in_flight' AND idempotency_key LIKE 'done-%'")
				.update();
			IntentRedrive before = new IntentRedrive(dataSource);
			for (int i = 0; i < 3; i++) {
				before.redriveExpired(2, List.of(), List.of());
			}
			long crashed = recordLeased("crashed-" + UUID.randomUUID(), SHORT);
			awaitExpired(crashed);
			// the reconciler's instance restarts
			IntentRedrive restarted = new IntentRedrive(dataSource);
			restarted.redriveExpired(2, List.of(), List.of());
			restarted.redriveExpired(2, List.of(), List.of());
			assertThat(status(crashed)).as("expired lease after the restarted reconciler's second round")
				.isEqualTo("pending");
		}
	}

	/**
	 * internals.md: a lease "still running after a second is handed to the lease index
	 * (lease_swept = false: one more row version, for long attempts only)". An intent
	 * recorded already leased at the commit of a transaction that worked for more than a
	 * second is an attempt that has just begun, yet the sweep reads its age from the
	 * start of that transaction.
	 */
	@Test
	void anAttemptRecordedAtTheEndOfALongTransactionIsNotHandedOverBeforeItRanASecond() throws Exception {
		long id = tx.execute((status) -> {
			// the application's transaction works for a while, then records its intent
			jdbc.sql("SELECT pg_sleep(1.5)").query().listOfRows();
			return recorder.insertLeased(intent("late-" + UUID.randomUUID()), "instance-a", LONG).id();
		});
		OffsetDateTime leased = jdbc
			.sql("SELECT lease_expires_at - interval '5 minutes' FROM eec_effect_intent WHERE id = ?")
			.param(id)
			.query(OffsetDateTime.class)
			.single();
		// the sweep's round runs the moment the lease was taken
		try (HikariDataSource clocked = database.newDataSource(1)) {
			LeaseSweep sweep = new LeaseSweep(new JdbcTemplate(new CountingDataSource(clocked, leased)));
			sweep.sweep(500, List.of(), List.of());
		}
		assertThat(jdbc.sql("SELECT lease_swept FROM eec_effect_intent WHERE id = ?")
			.param(id)
			.query(Boolean.class)
			.single()).as("an attempt of no time at all is still the sweep's").isTrue();
	}

	/**
	 * What a restore into a server that ran fewer transactions leaves: the watermark (and
	 * the leases) of the old server, above every transaction id of the new one.
	 */
	static void simulateRestoreFromServerWithMoreTransactions() {
		jdbc.sql("UPDATE eec_effect_lease_sweep SET lease_xid = txid_current() + 1000000, intent_id = 0 "
				+ "WHERE name = 'intents'")
			.update();
	}

	static long recordLeased(String key, Duration lease) {
		ClaimedIntent claimed = tx.execute((status) -> recorder.insertLeased(intent(key), "instance-a", lease));
		return claimed.id();
	}

	static NewIntent intent(String key) {
		return new NewIntent("sweep-promises", key, "[]", "f", Receiver.IDEMPOTENT, 3, Duration.ZERO, null, null, null,
				null);
	}

	static void awaitExpired(long id) {
		await().atMost(Duration.ofSeconds(10))
			.until(() -> jdbc.sql("SELECT lease_expires_at < ductor_now() FROM eec_effect_intent WHERE id = ?")
				.param(id)
				.query(Boolean.class)
				.single());
	}

	static String status(long id) {
		return jdbc.sql("SELECT status FROM eec_effect_intent WHERE id = ?").param(id).query(String.class).single();
	}

	/** Counts the connections taken: the sweep takes one per step (a transaction). */
	static final class CountingDataSource extends DelegatingDataSource {

		final AtomicInteger connections = new AtomicInteger();

		private final OffsetDateTime clock;

		CountingDataSource(HikariDataSource target, OffsetDateTime clock) {
			super(target);
			this.clock = clock;
		}

		@Override
		public Connection getConnection() throws SQLException {
			this.connections.incrementAndGet();
			Connection connection = super.getConnection();
			try (Statement statement = connection.createStatement()) {
				statement.execute("SET ductor.clock = '" + this.clock + "'");
			}
			return connection;
		}

	}

}
