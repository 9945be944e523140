package io.ductor.effect;

import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import javax.sql.DataSource;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.transaction.support.TransactionTemplate;

import io.ductor.test.PostgresExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * An effect called from an {@code afterCommit} callback (as a
 * {@code @TransactionalEventListener} of phase {@code AFTER_COMMIT} without a transaction
 * of its own runs): the transaction it would record into has committed already. The call
 * is refused with a clear error and nothing runs, whatever the pool and whether the
 * transaction recorded intents before; never an intent that is lost in silence, nor a
 * receiver called for an intent that does not exist.
 * <p>
 * Three applications: one on a pool in auto-commit (Spring's transaction manager turns
 * auto-commit back on after the transaction, which commits what was written after the
 * commit), one on a pool with {@code auto-commit=false} (nothing commits what was written
 * after the commit; the pool rolls it back), and one of those with a transaction manager
 * of its own.
 */
class EffectsRecordedAfterCommitTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	static ConfigurableApplicationContext autoCommitPool;

	static ConfigurableApplicationContext manualCommitPool;

	static ConfigurableApplicationContext ownTransactionManager;

	@BeforeAll
	static void start() {
		String[] properties = { "ductor.effects.drainer.concurrency=1", "ductor.effects.drainer.batch-size=1",
				"ductor.effects.drainer.poll-interval=200ms", "ductor.effects.drainer.lease=3s",
				"ductor.effects.reconciler.interval=500ms", "ductor.retention.interval=1h" };
		autoCommitPool = EffectInstances.start(postgres.database(), Config.class, properties);
		String[] manual = java.util.Arrays.copyOf(properties, properties.length + 1);
		manual[properties.length] = "spring.datasource.hikari.auto-commit=false";
		manualCommitPool = EffectInstances.start(postgres.database(), Config.class, manual);
		ownTransactionManager = EffectInstances.start(postgres.database(), OwnTransactionManager.class, manual);
	}

	@AfterAll
	static void stop() {
		ownTransactionManager.close();
		manualCommitPool.close();
		autoCommitPool.close();
	}

	@Test
	void anEffectCalledAfterTheCommitOnAPoolInAutoCommitIsRefused() {
		ConfigurableApplicationContext context = autoCommitPool;
		String key = "after-commit-" + UUID.randomUUID();
		AtomicReference<RuntimeException> refused = recordAfterCommit(context, false, key);
		awaitEverythingHandedOverRan(context);

		assertRefused(refused.get());
		assertThat(intents(context, key)).as("the return to auto-commit commits nothing the call wrote").isZero();
		assertThat(Notes.calls(key)).isZero();
	}

	@Test
	void anEffectCalledAfterTheCommitOnAPoolWithoutAutoCommitNeverCallsItsReceiver() {
		ConfigurableApplicationContext context = manualCommitPool;
		String key = "after-commit-" + UUID.randomUUID();
		recordAfterCommit(context, false, key);
		awaitEverythingHandedOverRan(context);

		assertThat(intents(context, key)).as("nothing committed what was written after the commit").isZero();
		assertThat(Notes.calls(key)).as("receiver calls for an intent that never existed").isZero();
	}

	@Test
	void anEffectCalledAfterTheCommitOfATransactionThatRecordedIntentsIsRefused() {
		ConfigurableApplicationContext context = manualCommitPool;
		String key = "after-commit-" + UUID.randomUUID();
		AtomicReference<RuntimeException> refused = recordAfterCommit(context, true, key);
		awaitEverythingHandedOverRan(context);

		assertRefused(refused.get());
		assertThat(intents(context, key)).isZero();
		assertThat(Notes.calls(key)).as("receiver calls for an intent that never existed").isZero();
	}

	/**
	 * The first effect of a transaction called after its commit, on a pool without
	 * auto-commit: a call that returned would be an intent the pool rolls back in
	 * silence.
	 */
	@Test
	void theFirstEffectCalledAfterTheCommitOnAPoolWithoutAutoCommitIsRefused() {
		ConfigurableApplicationContext context = manualCommitPool;
		String key = "after-commit-" + UUID.randomUUID();
		AtomicReference<RuntimeException> refused = recordAfterCommit(context, false, key);
		awaitEverythingHandedOverRan(context);

		assertRefused(refused.get());
		assertThat(intents(context, key)).isZero();
		assertThat(Notes.calls(key)).isZero();
	}

	/**
	 * A transaction manager the application declares itself (Boot's customizers never see
	 * it) refuses the call as Boot's does.
	 */
	@Test
	void theFirstEffectCalledAfterTheCommitOfTheApplicationsOwnTransactionManagerIsRefused() {
		ConfigurableApplicationContext context = ownTransactionManager;
		String key = "after-commit-" + UUID.randomUUID();
		AtomicReference<RuntimeException> refused = recordAfterCommit(context, false, key);
		awaitEverythingHandedOverRan(context);

		assertRefused(refused.get());
		assertThat(intents(context, key)).isZero();
		assertThat(Notes.calls(key)).isZero();
	}

	/**
	 * In {@code afterCompletion} the connection still belongs to the finished
	 * transaction: on a pool in auto-commit, its return to auto-commit would commit an
	 * intent whose call threw.
	 */
	@Test
	void anEffectCalledAfterTheCompletionIsRefusedAndWritesNothing() {
		ConfigurableApplicationContext context = autoCommitPool;
		String key = "after-completion-" + UUID.randomUUID();
		AtomicReference<RuntimeException> refused = record(context, false, key, Phase.AFTER_COMPLETION, null);
		awaitEverythingHandedOverRan(context);

		assertRefused(refused.get());
		assertThat(intents(context, key)).isZero();
		assertThat(Notes.calls(key)).isZero();
	}

	/**
	 * What the refusal advises: a transaction of its own, started in the callback, is a
	 * transaction like any other, and so is the next one of the thread.
	 */
	@Test
	void anEffectCalledAfterTheCommitInATransactionOfItsOwnRunsOnce() {
		ConfigurableApplicationContext context = manualCommitPool;
		String key = "after-commit-" + UUID.randomUUID();
		TransactionTemplate requiresNew = tx(context);
		requiresNew.setPropagationBehavior(TransactionDefinition.PROPAGATION_REQUIRES_NEW);
		AtomicReference<RuntimeException> refused = record(context, true, key, Phase.AFTER_COMMIT, requiresNew);
		awaitEverythingHandedOverRan(context);

		assertThat(refused.get()).isNull();
		assertThat(intents(context, key)).isOne();
		await().atMost(Duration.ofSeconds(20)).until(() -> "completed".equals(status(context, key)));
		assertThat(Notes.calls(key)).isOne();
	}

	private static void assertRefused(RuntimeException refused) {
		assertThat(refused).as("the call after the commit").isInstanceOf(DurableEffectException.class);
		assertThat(refused).hasMessageContaining("Effect 'note' was called while its transaction was completing")
			.hasMessageContaining("REQUIRES_NEW");
	}

	private static AtomicReference<RuntimeException> recordAfterCommit(ConfigurableApplicationContext context,
			boolean recordBefore, String key) {
		return record(context, recordBefore, key, Phase.AFTER_COMMIT, null);
	}

	enum Phase {

		AFTER_COMMIT, AFTER_COMPLETION

	}

	/**
	 * Commits a transaction, recording an intent in it when {@code recordBefore}, whose
	 * callback of {@code phase} calls the effect, in a transaction of {@code own} when
	 * given.
	 * @return what the call threw, if anything
	 */
	private static AtomicReference<RuntimeException> record(ConfigurableApplicationContext context,
			boolean recordBefore, String key, Phase phase, TransactionTemplate own) {
		Notes notes = context.getBean(Notes.class);
		JdbcClient jdbc = JdbcClient.create(context.getBean(DataSource.class));
		AtomicReference<RuntimeException> refused = new AtomicReference<>();
		Runnable call = () -> {
			try {
				if (own != null) {
					own.executeWithoutResult((status) -> notes.note(key));
				}
				else {
					notes.note(key);
				}
			}
			catch (RuntimeException ex) {
				refused.set(ex);
			}
		};
		tx(context).executeWithoutResult((status) -> {
			jdbc.sql("SELECT 1").query(Integer.class).single();
			if (recordBefore) {
				notes.note("before-" + key);
			}
			TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {

				@Override
				public void afterCommit() {
					if (phase == Phase.AFTER_COMMIT) {
						call.run();
					}
				}

				@Override
				public void afterCompletion(int status) {
					if (phase == Phase.AFTER_COMPLETION) {
						call.run();
					}
				}

			});
		});
		return refused;
	}

	/**
	 * One worker runs what it is handed in order: once a marker recorded and handed over
	 * now has completed, whatever was handed over before it has run.
	 */
	private static void awaitEverythingHandedOverRan(ConfigurableApplicationContext context) {
		String marker = "marker-" + UUID.randomUUID();
		tx(context).executeWithoutResult((status) -> context.getBean(Notes.class).note(marker));
		await().atMost(Duration.ofSeconds(20)).until(() -> "completed".equals(status(context, marker)));
	}

	private static TransactionTemplate tx(ConfigurableApplicationContext context) {
		return new TransactionTemplate(context.getBean(PlatformTransactionManager.class));
	}

	private static String status(ConfigurableApplicationContext context, String key) {
		JdbcClient jdbc = JdbcClient.create(context.getBean(DataSource.class));
		return jdbc.sql("SELECT status FROM eec_effect_intent WHERE idempotency_key = ?")
			.param(key)
			.query(String.class)
			.optional()
			.orElse(null);
	}

	private static long intents(ConfigurableApplicationContext context, String key) {
		JdbcClient jdbc = JdbcClient.create(context.getBean(DataSource.class));
		return jdbc.sql("SELECT count(*) FROM eec_effect_intent WHERE idempotency_key = ?")
			.param(key)
			.query(Long.class)
			.single();
	}

	/**
	 * An effect whose receiver counts its calls in memory: on a pool without auto-commit,
	 * a call log written outside a transaction would never commit.
	 */
	public static class Notes {

		static final Map<String, AtomicInteger> calls = new ConcurrentHashMap<>();

		@DurableEffect(name = "note", key = "#key")
		public void note(String key) {
			calls.computeIfAbsent(key, (k) -> new AtomicInteger()).incrementAndGet();
		}

		static int calls(String key) {
			AtomicInteger count = calls.get(key);
			return (count != null) ? count.get() : 0;
		}

	}

	@Configuration(proxyBeanMethods = false)
	@Import(TestEffects.Config.class)
	static class Config {

		@Bean
		Notes notes() {
			return new Notes();
		}

	}

	@Configuration(proxyBeanMethods = false)
	@Import(Config.class)
	static class OwnTransactionManager {

		@Bean
		PlatformTransactionManager transactionManager(DataSource dataSource) {
			return new DataSourceTransactionManager(dataSource);
		}

	}

}
