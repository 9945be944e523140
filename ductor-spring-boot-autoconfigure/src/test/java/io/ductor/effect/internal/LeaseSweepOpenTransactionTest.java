package io.ductor.effect.internal;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import com.zaxxer.hikari.HikariDataSource;
import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import io.ductor.effect.EffectStatus;
import io.ductor.effect.Receiver;
import io.ductor.effect.internal.IntentClaims.ClaimedIntent;
import io.ductor.effect.internal.IntentOutcomes.Completion;
import io.ductor.effect.internal.IntentRecorder.NewIntent;
import io.ductor.jdbc.internal.DuctorSchema;
import io.ductor.test.TestDatabase;
import io.ductor.test.TestDatabases;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The reconciler's sweep ({@link LeaseSweep}) while another transaction holding a
 * transaction id stays open, on another database of the same server (transaction ids are
 * the server's): the watermark cannot pass it, but an expired lease committed after it
 * began is still redriven in the reconciler's next round, as operations.md promises ("a
 * crash delays those effects by up to lease + reconciler interval"). Each call of
 * {@link IntentRedrive#redriveExpired} is one reconciler round.
 */
class LeaseSweepOpenTransactionTest {

	static final Duration SHORT = Duration.ofMillis(100);

	static final Duration LONG = Duration.ofMinutes(5);

	static TestDatabase database;

	static TestDatabase other;

	static HikariDataSource dataSource;

	static IntentRecorder recorder;

	static IntentOutcomes outcomes;

	static TransactionTemplate tx;

	static JdbcClient jdbc;

	@BeforeAll
	static void start() {
		database = TestDatabases.create();
		other = TestDatabases.create();
		dataSource = database.newDataSource(6);
		Flyway.configure()
			.dataSource(dataSource)
			.locations(DuctorSchema.LOCATION)
			.table(DuctorSchema.HISTORY_TABLE)
			.load()
			.migrate();
		recorder = new IntentRecorder(dataSource);
		outcomes = new IntentOutcomes(dataSource);
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
		if (other != null) {
			TestDatabases.drop(other);
		}
	}

	@Test
	void anExpiredLeaseCommittedWhileATransactionOfAnotherDatabaseStaysOpenIsRedrivenInTheNextRound() throws Exception {
		IntentRedrive reconciler = new IntentRedrive(dataSource);
		try (Connection open = idleInTransaction()) {
			long crashed = recordLeased("crashed-" + UUID.randomUUID(), SHORT);
			awaitExpired(crashed);
			reconciler.redriveExpired(500, List.of(), List.of());
			assertThat(status(crashed)).isEqualTo("pending");
		}
	}

	@Test
	void anExpiredLeaseWhoseTransactionBeganBeforeALaterOneCommittedIsRedrivenWhileAnotherTransactionStaysOpen()
			throws Exception {
		IntentRedrive reconciler = new IntentRedrive(dataSource);
		try (Connection open = idleInTransaction()) {
			// a producer takes its transaction id, and records its intent (leased at
			// commit) only at the end of its work
			CountDownLatch began = new CountDownLatch(1);
			CountDownLatch record = new CountDownLatch(1);
			String key = "crashed-" + UUID.randomUUID();
			CompletableFuture<Long> slowProducer = CompletableFuture.supplyAsync(() -> tx.execute((status) -> {
				jdbc.sql("SELECT txid_current()").query(Long.class).single();
				began.countDown();
				awaitLatch(record);
				return recorder.insertLeased(intent(key), "instance-a", SHORT).id();
			}));
			assertThat(began.await(10, TimeUnit.SECONDS)).isTrue();
			// meanwhile another producer commits and its effect completes, and the
			// reconciler's rounds walk past its lease
			long done = recordLeased("done-" + UUID.randomUUID(), LONG);
			assertThat(outcomes.complete("instance-a",
					List.of(new Completion(done, 1, EffectStatus.COMPLETED, null, null))))
				.hasSize(1);
			reconciler.redriveExpired(500, List.of(), List.of());
			// the slow producer commits; its instance crashes before completing the
			// effect
			record.countDown();
			long crashed = slowProducer.get(10, TimeUnit.SECONDS);
			awaitExpired(crashed);
			reconciler.redriveExpired(500, List.of(), List.of());
			assertThat(status(crashed)).as("expired lease, its transaction ended, after the reconciler's next round")
				.isEqualTo("pending");
		}
	}

	@Test
	void anExpiredLeaseBehindManyCompletedOnesIsRedrivenInTheNextRoundWhileAnotherTransactionStaysOpen()
			throws Exception {
		IntentRedrive reconciler = new IntentRedrive(dataSource);
		int batch = 5;
		try (Connection open = idleInTransaction()) {
			// the reconciler's rounds go on while the effects of other producers complete
			// faster than one batch per round
			for (int round = 0; round < 3; round++) {
				for (int i = 0; i < 4 * batch; i++) {
					long done = recordLeased("done-" + UUID.randomUUID(), LONG);
					outcomes.complete("instance-a",
							List.of(new Completion(done, 1, EffectStatus.COMPLETED, null, null)));
				}
				reconciler.redriveExpired(batch, List.of(), List.of());
			}
			long crashed = recordLeased("crashed-" + UUID.randomUUID(), SHORT);
			awaitExpired(crashed);
			reconciler.redriveExpired(batch, List.of(), List.of());
			assertThat(status(crashed)).as("expired lease after the reconciler's next round").isEqualTo("pending");
		}
	}

	@Test
	void anExpiredLeaseIsRedrivenInTheNextRoundWhileTwoTransactionsStayOpen() throws Exception {
		IntentRedrive reconciler = new IntentRedrive(dataSource);
		try (Connection first = idleInTransaction(); Connection second = idleInTransaction()) {
			long crashed = recordLeased("crashed-" + UUID.randomUUID(), SHORT);
			awaitExpired(crashed);
			reconciler.redriveExpired(500, List.of(), List.of());
			assertThat(status(crashed)).isEqualTo("pending");
		}
	}

	@Test
	void aLeaseOfATransactionOpenBetweenTwoOthersIsRedrivenOnceItCommitsExpiredWhileTheOthersStayOpen()
			throws Exception {
		IntentRedrive reconciler = new IntentRedrive(dataSource);
		try (Connection first = idleInTransaction()) {
			CountDownLatch began = new CountDownLatch(1);
			CountDownLatch record = new CountDownLatch(1);
			String key = "slow-" + UUID.randomUUID();
			CompletableFuture<Long> slowProducer = CompletableFuture.supplyAsync(() -> tx.execute((status) -> {
				jdbc.sql("SELECT txid_current()").query(Long.class).single();
				began.countDown();
				awaitLatch(record);
				return recorder.insertLeased(intent(key), "instance-a", SHORT).id();
			}));
			assertThat(began.await(10, TimeUnit.SECONDS)).isTrue();
			try (Connection third = idleInTransaction()) {
				// leases committed after all three began: the rounds walk past them
				long crashed = recordLeased("crashed-" + UUID.randomUUID(), SHORT);
				for (int i = 0; i < 10; i++) {
					long done = recordLeased("done-" + UUID.randomUUID(), LONG);
					outcomes.complete("instance-a",
							List.of(new Completion(done, 1, EffectStatus.COMPLETED, null, null)));
				}
				awaitExpired(crashed);
				reconciler.redriveExpired(500, List.of(), List.of());
				assertThat(status(crashed)).as("expired lease committed after both open transactions began")
					.isEqualTo("pending");
				// the transaction between them commits a lease already expired
				record.countDown();
				long slow = slowProducer.get(10, TimeUnit.SECONDS);
				awaitExpired(slow);
				reconciler.redriveExpired(500, List.of(), List.of());
				assertThat(status(slow)).as("expired lease of a transaction that began between two still open")
					.isEqualTo("pending");
				assertThat(jdbc.sql("SELECT lease_xid FROM eec_effect_lease_sweep").query(Long.class).single())
					.as("the watermark stays below the oldest transaction still open")
					.isLessThan(xid(first));
			}
		}
	}

	/**
	 * A round whose transaction rolls back (here its commit fails, as when the server
	 * restarts or the connection breaks at commit) undoes its redrives: nothing it walked
	 * counts as walked, so the next round walks those leases again, and the watermark
	 * never passes them.
	 */
	@Test
	void aLeaseRedrivenByARoundThatRolledBackIsRedrivenByTheNextRound() throws Exception {
		jdbc.sql("CREATE SEQUENCE IF NOT EXISTS sweep_commit_faults").update();
		jdbc.sql("""
				CREATE OR REPLACE FUNCTION sweep_commit_fault() RETURNS trigger LANGUAGE plpgsql AS $$
				BEGIN
				    IF NEW.idempotency_key LIKE 'rolled-back-%' AND nextval('sweep_commit_faults') = 1 THEN
				        RAISE EXCEPTION 'the commit of this round fails';
				    END IF;
				    RETURN NULL;
				END $$""").update();
		jdbc.sql("""
				CREATE CONSTRAINT TRIGGER sweep_commit_fault AFTER UPDATE ON eec_effect_intent
				DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
				WHEN (OLD.status = 'in_flight' AND NEW.status = 'pending') EXECUTE FUNCTION sweep_commit_fault()""")
			.update();
		try {
			IntentRedrive reconciler = new IntentRedrive(dataSource);
			long crashed = recordLeased("rolled-back-" + UUID.randomUUID(), SHORT);
			awaitExpired(crashed);
			assertThatThrownBy(() -> reconciler.redriveExpired(500, List.of(), List.of()))
				.hasMessageContaining("the commit of this round fails");
			assertThat(status(crashed)).isEqualTo("in_flight");
			reconciler.redriveExpired(500, List.of(), List.of());
			assertThat(status(crashed)).as("redriven by the round after the one that rolled back").isEqualTo("pending");
		}
		finally {
			jdbc.sql("DROP TRIGGER sweep_commit_fault ON eec_effect_intent").update();
		}
	}

	/**
	 * Two reconcilers: while one holds the watermark in the middle of its round, the
	 * other's rounds skip the sweep; when the first is killed there (its database
	 * connection terminated, so its round rolls back), the other's next round redrives
	 * what the killed one had redriven.
	 */
	@Test
	void whenTheReconcilerSweepingIsKilledMidRoundAnotherOneRedrivesWhatItHad() throws Exception {
		jdbc.sql("""
				CREATE OR REPLACE FUNCTION sweep_stall() RETURNS trigger LANGUAGE plpgsql AS $$
				BEGIN
				    IF NEW.idempotency_key LIKE 'killed-%' THEN
				        PERFORM pg_sleep(60);
				    END IF;
				    RETURN NULL;
				END $$""").update();
		jdbc.sql("""
				CREATE CONSTRAINT TRIGGER sweep_stall AFTER UPDATE ON eec_effect_intent
				DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
				WHEN (OLD.status = 'in_flight' AND NEW.status = 'pending') EXECUTE FUNCTION sweep_stall()""").update();
		IntentRedrive first = new IntentRedrive(dataSource);
		IntentRedrive second = new IntentRedrive(dataSource);
		long crashed = recordLeased("killed-" + UUID.randomUUID(), SHORT);
		awaitExpired(crashed);
		CompletableFuture<List<Settled>> stalled = CompletableFuture
			.supplyAsync(() -> first.redriveExpired(500, List.of(), List.of()));
		try {
			long pid = await().atMost(Duration.ofSeconds(20))
				.until(() -> jdbc.sql("""
						SELECT pid FROM pg_stat_activity
						WHERE datname = current_database() AND wait_event = 'PgSleep'""").query(Long.class).optional(),
						java.util.Optional::isPresent)
				.orElseThrow();
			second.redriveExpired(500, List.of(), List.of());
			assertThat(status(crashed)).as("the first reconciler's round holds the sweep").isEqualTo("in_flight");
			jdbc.sql("SELECT pg_terminate_backend(?::int)").param(pid).query(Boolean.class).single();
			assertThatThrownBy(() -> stalled.get(20, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class);
		}
		finally {
			jdbc.sql("DROP TRIGGER sweep_stall ON eec_effect_intent").update();
		}
		assertThat(status(crashed)).as("the killed round rolled back").isEqualTo("in_flight");
		second.redriveExpired(500, List.of(), List.of());
		assertThat(status(crashed)).as("redriven by the other reconciler").isEqualTo("pending");
	}

	/**
	 * A transaction prepared for two-phase commit keeps its id, and its lease stays
	 * invisible, until it is committed or rolled back, whatever becomes of the connection
	 * that prepared it (here closed, as by a transaction manager that crashed): the
	 * watermark waits for it, the redrive of other leases does not, and its own lease is
	 * redriven once it is committed. Needs {@code max_prepared_transactions} above 0 (the
	 * embedded server's; PostgreSQL's default is 0, which refuses
	 * {@code PREPARE TRANSACTION}).
	 */
	@Test
	void aPreparedTransactionHoldsBackTheWatermarkButNotTheRedriveAndItsLeaseIsRedrivenOnceCommitted()
			throws Exception {
		assumeTrue(
				jdbc.sql("SELECT current_setting('max_prepared_transactions')::int").query(Integer.class).single() > 0,
				"max_prepared_transactions is 0 on this server");
		IntentRedrive reconciler = new IntentRedrive(dataSource);
		String gid = "ductor-test-" + UUID.randomUUID();
		String key = "prepared-" + UUID.randomUUID();
		long preparedXid;
		try (Connection preparing = dataSource.getConnection()) {
			preparing.setAutoCommit(false);
			preparedXid = xid(preparing);
			try (PreparedStatement insert = preparing.prepareStatement(IntentRecorder.INSERT_LEASED_SQL)) {
				Object[] values = { "sweep-open", key, "[]", "f", "IDEMPOTENT", 3, null, null, "instance-a",
						SHORT.toMillis() };
				for (int i = 0; i < values.length; i++) {
					insert.setObject(i + 1, values[i]);
				}
				insert.executeQuery().close();
			}
			try (Statement statement = preparing.createStatement()) {
				statement.execute("PREPARE TRANSACTION '" + gid + "'");
			}
			preparing.setAutoCommit(true);
		}
		try (Connection open = idleInTransaction()) {
			long crashed = recordLeased("crashed-" + UUID.randomUUID(), SHORT);
			awaitExpired(crashed);
			reconciler.redriveExpired(500, List.of(), List.of());
			assertThat(status(crashed)).as("expired lease committed while a prepared transaction waits")
				.isEqualTo("pending");
			assertThat(jdbc.sql("SELECT lease_xid FROM eec_effect_lease_sweep").query(Long.class).single())
				.as("the watermark stays below the prepared transaction")
				.isLessThan(preparedXid);
			jdbc.sql("COMMIT PREPARED '" + gid + "'").update();
			long prepared = jdbc.sql("SELECT id FROM eec_effect_intent WHERE idempotency_key = ?")
				.param(key)
				.query(Long.class)
				.single();
			awaitExpired(prepared);
			reconciler.redriveExpired(500, List.of(), List.of());
			assertThat(status(prepared)).as("the prepared transaction's expired lease, once committed")
				.isEqualTo("pending");
		}
		finally {
			jdbc.sql("SELECT gid FROM pg_prepared_xacts WHERE gid = ?")
				.param(gid)
				.query(String.class)
				.optional()
				.ifPresent((left) -> jdbc.sql("ROLLBACK PREPARED '" + left + "'").update());
		}
	}

	static long xid(Connection connection) throws Exception {
		try (Statement statement = connection.createStatement();
				ResultSet rs = statement.executeQuery("SELECT txid_current()")) {
			rs.next();
			return rs.getLong(1);
		}
	}

	/** A transaction of another database of the same server, idle with its id taken. */
	static Connection idleInTransaction() throws Exception {
		Connection connection = other.connect();
		connection.setAutoCommit(false);
		try (Statement statement = connection.createStatement();
				ResultSet rs = statement.executeQuery("SELECT txid_current()")) {
			rs.next();
		}
		return connection;
	}

	static long recordLeased(String key, Duration lease) {
		ClaimedIntent claimed = tx.execute((status) -> recorder.insertLeased(intent(key), "instance-a", lease));
		return claimed.id();
	}

	static NewIntent intent(String key) {
		return new NewIntent("sweep-open", key, "[]", "f", Receiver.IDEMPOTENT, 3, Duration.ZERO, null, null, null,
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

	static void awaitLatch(CountDownLatch latch) {
		try {
			latch.await(10, TimeUnit.SECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

}
