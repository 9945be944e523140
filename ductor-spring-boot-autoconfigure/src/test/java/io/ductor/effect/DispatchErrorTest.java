package io.ductor.effect;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import javax.sql.DataSource;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import io.ductor.test.PostgresExtension;
import io.ductor.test.TestDatabase;
import io.ductor.test.TestDatabases;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * An {@code Error} while the arguments are read or the effect runs settles the attempt,
 * keeps the error on the intent and leaves the worker running.
 */
class DispatchErrorTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	@Test
	void anErrorWhileReadingTheArgumentsFailsTheIntentWithTheErrorAndTheWorkerGoesOn() {
		TestDatabase database = TestDatabases.create();
		try (ConfigurableApplicationContext context = EffectInstances.start(database, Config.class,
				"ductor.effects.drainer.poll-interval=100ms", "ductor.effects.drainer.concurrency=1",
				"ductor.effects.reconciler.interval=1h")) {
			JdbcClient jdbc = JdbcClient.create(context.getBean(DataSource.class));
			// arguments an older release stored, of a type the new code cannot initialise
			jdbc.sql("""
					INSERT INTO eec_effect_intent (effect_name, idempotency_key, payload, payload_fingerprint, receiver,
					    max_attempts)
					VALUES ('fragile', 'fragile-1', '[{"n": 1}]', 'f', 'IDEMPOTENT', 5),
					       ('fragile', 'fragile-2', '[{"n": 2}]', 'f', 'IDEMPOTENT', 5),
					       ('fragileMail', 'fragile-mail', '[{"n": 3}]', 'f', 'NOT_IDEMPOTENT', 5)""").update();
			await().atMost(Duration.ofSeconds(20))
				.until(() -> jdbc.sql("SELECT count(*) FROM eec_effect_intent WHERE status = 'failed'")
					.query(Long.class)
					.single() == 3);
			List<Map<String, Object>> rows = jdbc
				.sql("SELECT idempotency_key, attempts, last_error FROM eec_effect_intent ORDER BY id")
				.query()
				.listOfRows();
			// the first read initialises the type and fails; later reads cannot even find
			// it
			assertThat(rows).allSatisfy((row) -> assertThat(row.get("attempts")).isEqualTo(1));
			assertThat(rows.get(0).get("last_error").toString()).contains("ExceptionInInitializerError")
				.contains("cannot initialise in this release");
			assertThat(rows.get(1).get("last_error").toString()).contains("NoClassDefFoundError");
			// a receiver that cannot deduplicate was never reached: failed, not parked
			assertThat(rows.get(2).get("last_error").toString()).contains("the effect did not run");

			TestEffects effects = context.getBean(TestEffects.class);
			new TransactionTemplate(context.getBean(PlatformTransactionManager.class))
				.executeWithoutResult((status) -> effects.notify("after the errors"));
			RecordingReceiver receiver = context.getBean(RecordingReceiver.class);
			await().atMost(Duration.ofSeconds(20)).until(() -> receiver.calls("notify") == 1);
			assertThat(receiver.calls()).isOne();
		}
		finally {
			TestDatabases.drop(database);
		}
	}

	@Test
	void anErrorThrownByTheEffectSettlesTheAttemptWithTheError() {
		TestDatabase database = TestDatabases.create();
		try (ConfigurableApplicationContext context = EffectInstances.start(database, Config.class,
				"ductor.effects.drainer.poll-interval=100ms", "ductor.effects.drainer.concurrency=1",
				"ductor.effects.reconciler.interval=1h")) {
			JdbcClient jdbc = JdbcClient.create(context.getBean(DataSource.class));
			Breaking breaking = context.getBean(Breaking.class);
			new TransactionTemplate(context.getBean(PlatformTransactionManager.class))
				.executeWithoutResult((status) -> {
					breaking.linkage("linkage");
					breaking.overflowMail("overflow");
				});
			await().atMost(Duration.ofSeconds(20))
				.until(() -> jdbc
					.sql("SELECT count(*) FROM eec_effect_intent WHERE status IN ('failed', 'needs_decision')")
					.query(Long.class)
					.single() == 2);
			Map<String, Object> linkage = row(jdbc, "linkage");
			assertThat(linkage).containsEntry("status", "failed").containsEntry("attempts", 1);
			assertThat(linkage.get("last_error").toString()).contains("NoClassDefFoundError")
				.contains("retry it once the code is fixed");
			Map<String, Object> overflow = row(jdbc, "overflow");
			assertThat(overflow).containsEntry("status", "needs_decision");
			assertThat(overflow.get("last_error").toString()).contains("StackOverflowError");
		}
		finally {
			TestDatabases.drop(database);
		}
	}

	private static Map<String, Object> row(JdbcClient jdbc, String key) {
		return jdbc.sql("SELECT status, attempts, last_error FROM eec_effect_intent WHERE idempotency_key = ?")
			.param(key)
			.query()
			.singleRow();
	}

	/** A type whose class initialisation fails, as one the new release cannot load. */
	public static class Fragile {

		private static final int LIMIT = limit();

		public int n;

		private static int limit() {
			if (Boolean.parseBoolean("true")) {
				throw new IllegalStateException("Fragile cannot initialise in this release");
			}
			return 0;
		}

	}

	/** Effects whose arguments or bodies end in an {@code Error}. */
	public static class Breaking {

		@DurableEffect(name = "fragile", key = "'unused'")
		public void fragile(Fragile value) {
		}

		@DurableEffect(name = "fragileMail", key = "'unused'", receiver = Receiver.NOT_IDEMPOTENT)
		public void fragileMail(Fragile value) {
		}

		@DurableEffect(name = "linkage", key = "#key", maxAttempts = 5)
		public void linkage(String key) {
			throw new NoClassDefFoundError("com/example/Gone");
		}

		@DurableEffect(name = "overflowMail", key = "#key", receiver = Receiver.NOT_IDEMPOTENT)
		public void overflowMail(String key) {
			throw new StackOverflowError();
		}

	}

	@Configuration(proxyBeanMethods = false)
	@Import(TestEffects.Config.class)
	static class Config {

		@Bean
		Breaking breaking() {
			return new Breaking();
		}

	}

}
