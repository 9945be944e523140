package io.ductor.effect;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;

import javax.sql.DataSource;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.DelegatingDataSource;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.support.TransactionTemplate;

import io.ductor.test.PostgresExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * Dispatch at commit follows the physical transaction that recorded an intent: a
 * {@code REQUIRES_NEW} transaction inside one that recorded intents hands over its own
 * intents when it commits and nothing when it rolls back, whatever the outer transaction
 * does; a savepoint rolled back keeps its neighbours running; a commit whose outcome is
 * unknown leaves nothing held; and a transaction of another transaction manager, whose
 * connection of Ductor's {@code DataSource} is in auto-commit, is no transaction to
 * record in.
 * <p>
 * One worker, batches of one, and no reconciler: an intent runs only when it is handed
 * over or claimed, and the worker runs what it is handed in order, so an intent recorded
 * and completed after another was handed over proves the other ran first, or never will.
 */
class DispatchAtCommitTransactionsTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	static ConfigurableApplicationContext context;

	static TestEffects effects;

	static TransactionTemplate tx;

	static TransactionTemplate requiresNew;

	static TransactionTemplate nested;

	static JdbcClient jdbc;

	/** What the next commit on this thread does. */
	static final ThreadLocal<CommitFault> commitFault = ThreadLocal.withInitial(() -> CommitFault.NONE);

	enum CommitFault {

		NONE,

		/** It commits in the database, then reports an error: the outcome is unknown. */
		FAIL_AFTER_COMMIT,

		/** It rolls back instead, and reports an error: the outcome is unknown. */
		ROLL_BACK_INSTEAD

	}

	@BeforeAll
	static void start() {
		context = EffectInstances.start(postgres.database(), Config.class, "ductor.effects.drainer.concurrency=1",
				"ductor.effects.drainer.batch-size=1", "ductor.effects.drainer.poll-interval=200ms",
				"ductor.effects.reconciler.interval=1h", "ductor.retention.interval=1h");
		effects = context.getBean(TestEffects.class);
		PlatformTransactionManager transactions = context.getBean(PlatformTransactionManager.class);
		tx = new TransactionTemplate(transactions);
		requiresNew = new TransactionTemplate(transactions);
		requiresNew.setPropagationBehavior(TransactionDefinition.PROPAGATION_REQUIRES_NEW);
		nested = new TransactionTemplate(transactions);
		nested.setPropagationBehavior(TransactionDefinition.PROPAGATION_NESTED);
		jdbc = JdbcClient.create(context.getBean(DataSource.class));
	}

	@AfterAll
	static void stop() {
		context.close();
	}

	@Test
	void anInnerRequiresNewThatRollsBackNeverCallsItsReceiverWhenTheOuterCommits() {
		String outer = key("outer-commits");
		String inner = key("inner-rolls-back");
		tx.executeWithoutResult((status) -> {
			effects.scripted(outer);
			requiresNew.executeWithoutResult((innerStatus) -> {
				effects.scripted(inner);
				innerStatus.setRollbackOnly();
			});
		});

		awaitCompleted(outer);
		awaitEverythingHandedOverRan();
		assertThat(intents(inner)).isZero();
		assertThat(calls(inner)).as("a receiver called for an intent that never existed").isZero();
		assertThat(calls(outer)).isOne();
	}

	@Test
	void anInnerRequiresNewThatCommitsRunsOnceWhenTheOuterRollsBack() {
		String outer = key("outer-rolls-back");
		String inner = key("inner-commits");
		tx.executeWithoutResult((status) -> {
			effects.scripted(outer);
			requiresNew.executeWithoutResult((innerStatus) -> effects.scripted(inner));
			status.setRollbackOnly();
		});

		// no reconciler runs: only its own hand-over (or a claim) can run it
		awaitCompleted(inner);
		awaitEverythingHandedOverRan();
		assertThat(row(inner)).containsEntry("attempts", 1);
		assertThat(calls(inner)).isOne();
		assertThat(intents(outer)).isZero();
		assertThat(calls(outer)).isZero();
	}

	@Test
	void anInnerRequiresNewHandsItsIntentsOverAtItsOwnCommitBeforeTheOuterCommits() {
		String outer = key("outer-later");
		String inner = key("inner-first");
		tx.executeWithoutResult((status) -> {
			effects.scripted(outer);
			requiresNew.executeWithoutResult((innerStatus) -> effects.scripted(inner));
			awaitCompleted(inner);
			assertThat(row(outer)).containsEntry("status", "in_flight");
		});

		awaitCompleted(outer);
		assertThat(calls(inner)).isOne();
		assertThat(calls(outer)).isOne();
	}

	@Test
	void aSavepointRolledBackLeavesItsNeighboursRunningOnceAndItsOwnIntentNeverCalled() {
		String before = key("before-savepoint");
		String undone = key("rolled-back-to-savepoint");
		String kept = key("in-released-savepoint");
		String newInNested = key("requires-new-in-nested");
		tx.executeWithoutResult((status) -> {
			effects.scripted(before);
			nested.executeWithoutResult((savepoint) -> {
				effects.scripted(undone);
				requiresNew.executeWithoutResult((innerStatus) -> effects.scripted(newInNested));
				savepoint.setRollbackOnly();
			});
			nested.executeWithoutResult((savepoint) -> effects.scripted(kept));
		});

		awaitCompleted(before);
		awaitCompleted(kept);
		awaitCompleted(newInNested);
		awaitEverythingHandedOverRan();
		assertThat(intents(undone)).isZero();
		assertThat(calls(undone)).isZero();
		assertThat(calls(before)).isOne();
		assertThat(calls(kept)).isOne();
		assertThat(calls(newInNested)).isOne();
	}

	/**
	 * Boot's {@code JdbcTransactionManager} turns the commit's error into a
	 * {@code DataAccessException}, rolls back (a no-op after a commit) and reports the
	 * transaction rolled back, although it committed.
	 */
	@Test
	void aCommitThatSucceedsButReportsAnErrorLeavesItsIntentToRunOnceAtOnce() {
		aCommitThatSucceedsButReportsAnErrorLeavesItsIntentToRunOnceAtOnce(tx);
	}

	/**
	 * A plain {@code DataSourceTransactionManager} reports the outcome unknown.
	 */
	@Test
	void aCommitThatSucceedsButReportsAnUnknownOutcomeLeavesItsIntentToRunOnceAtOnce() {
		aCommitThatSucceedsButReportsAnErrorLeavesItsIntentToRunOnceAtOnce(
				new TransactionTemplate(new DataSourceTransactionManager(context.getBean(DataSource.class))));
	}

	private void aCommitThatSucceedsButReportsAnErrorLeavesItsIntentToRunOnceAtOnce(TransactionTemplate transactions) {
		String key = key("commit-reported-failed");
		commitWith(CommitFault.FAIL_AFTER_COMMIT, transactions, () -> effects.scripted(key));
		assertThat(intents(key)).as("the commit went through").isOne();

		// no reconciler runs, and the lease lasts 30 s: only a hand-back and a claim can
		// run it within the wait
		awaitCompleted(key);
		awaitEverythingHandedOverRan();
		assertThat(calls(key)).isOne();
	}

	@Test
	void aCommitThatRollsBackButReportsAnErrorCallsNothing() {
		String key = key("commit-rolled-back");
		String other = key("commit-unknown-rolled-back");
		commitWith(CommitFault.ROLL_BACK_INSTEAD, tx, () -> effects.scripted(key));
		commitWith(CommitFault.ROLL_BACK_INSTEAD,
				new TransactionTemplate(new DataSourceTransactionManager(context.getBean(DataSource.class))),
				() -> effects.scripted(other));

		awaitEverythingHandedOverRan();
		assertThat(intents(key)).isZero();
		assertThat(calls(key)).isZero();
		assertThat(intents(other)).isZero();
		assertThat(calls(other)).isZero();
	}

	private static void commitWith(CommitFault fault, TransactionTemplate transactions, Runnable work) {
		try {
			assertThatExceptionOfType(RuntimeException.class)
				.isThrownBy(() -> transactions.executeWithoutResult((status) -> {
					work.run();
					commitFault.set(fault);
				}))
				.havingRootCause()
				.withMessageContaining("connection lost");
		}
		finally {
			commitFault.set(CommitFault.NONE);
		}
	}

	@Test
	void aConnectionInAutoCommitUnderAnotherTransactionManagerIsNoTransactionToRecordIn() {
		String key = key("foreign");
		// another transaction manager, on another DataSource (a message broker's, another
		// database's): its transaction is active, but Ductor's DataSource joins it only
		// as a connection in auto-commit
		TransactionTemplate foreign = new TransactionTemplate(new DataSourceTransactionManager(postgres.dataSource()));
		assertThatExceptionOfType(DurableEffectException.class)
			.isThrownBy(() -> foreign.executeWithoutResult((status) -> {
				assertThat(jdbc.sql("SELECT 1").query(Integer.class).single()).isOne();
				effects.scripted(key);
			}))
			.withMessageContaining("Effect 'scripted' was called outside a transaction");
		assertThat(intents(key)).isZero();
		assertThat(calls(key)).isZero();
	}

	/**
	 * Records an intent, hands it over and waits for it: with one worker running what it
	 * is handed in order, everything handed over before it has run.
	 */
	static void awaitEverythingHandedOverRan() {
		String marker = key("marker");
		tx.executeWithoutResult((status) -> effects.scripted(marker));
		awaitCompleted(marker);
	}

	static Map<String, Object> row(String key) {
		return jdbc.sql("SELECT status, attempts, lease_owner FROM eec_effect_intent WHERE idempotency_key = ?")
			.param(key)
			.query()
			.singleRow();
	}

	static long intents(String key) {
		return jdbc.sql("SELECT count(*) FROM eec_effect_intent WHERE idempotency_key = ?")
			.param(key)
			.query(Long.class)
			.single();
	}

	static long calls(String key) {
		return jdbc.sql("SELECT count(*) FROM test_call_log WHERE idempotency_key = ?")
			.param(key)
			.query(Long.class)
			.single();
	}

	static void awaitCompleted(String key) {
		await().atMost(Duration.ofSeconds(20))
			.until(() -> intents(key) == 1 && "completed".equals(row(key).get("status")));
	}

	static String key(String prefix) {
		return prefix + "-" + UUID.randomUUID();
	}

	/**
	 * The test effects, on a DataSource whose connections can report a failure after a
	 * commit that went through (a connection lost while the answer was on its way).
	 */
	@Configuration(proxyBeanMethods = false)
	@Import(TestEffects.Config.class)
	static class Config {

		@Bean
		static BeanPostProcessor commitFailures() {
			return new BeanPostProcessor() {

				@Override
				public Object postProcessAfterInitialization(Object bean, String beanName) {
					return (bean instanceof DataSource dataSource) ? new CommitFailingDataSource(dataSource) : bean;
				}

			};
		}

	}

	static final class CommitFailingDataSource extends DelegatingDataSource {

		CommitFailingDataSource(DataSource target) {
			super(target);
		}

		@Override
		public Connection getConnection() throws SQLException {
			Connection connection = super.getConnection();
			return (Connection) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] { Connection.class },
					(proxy, method, args) -> {
						CommitFault fault = CommitFault.NONE;
						if (method.getName().equals("commit")) {
							fault = commitFault.get();
							commitFault.set(CommitFault.NONE);
						}
						if (fault == CommitFault.ROLL_BACK_INSTEAD) {
							connection.rollback();
							throw new SQLException("connection lost before the commit reached the server", "08006");
						}
						Object result;
						try {
							result = method.invoke(connection, args);
						}
						catch (InvocationTargetException ex) {
							throw ex.getCause();
						}
						if (fault == CommitFault.FAIL_AFTER_COMMIT) {
							throw new SQLException("connection lost while the commit's answer was on its way", "08006");
						}
						return result;
					});
		}

	}

}
