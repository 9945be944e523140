package io.ductor.effect;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariDataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.simple.JdbcClient;

import io.ductor.test.PostgresExtension;
import io.ductor.test.TestDatabase;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A JVM that dies right after committing intents it recorded leased to itself, before
 * handing them to its workers: another instance sees ordinary expired leases, and the
 * reconciler redrives them. The idempotent intent runs again as attempt 2; the
 * non-idempotent one, never marked started, goes back to pending uncounted and runs once,
 * without a decision.
 */
class DispatchAtCommitCrashTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	@Test
	void intentsCommittedByAJvmThatDiedBeforeDispatchingThemAreRedrivenByAnotherInstance() throws Exception {
		TestDatabase database = postgres.database();
		String idempotent = "halted-" + UUID.randomUUID();
		String mail = "halted-mail-" + UUID.randomUUID();
		List<String> args = new ArrayList<>(List.of(database.jdbcUrl(), database.username(), idempotent, mail));
		if (database.password() != null) {
			args.add(database.password());
		}
		Process child = ChildJvm.start(CommitThenHaltMain.class, "commit-then-halt.log", args);
		assertThat(child.waitFor(2, TimeUnit.MINUTES)).isTrue();
		assertThat(child.exitValue()).isEqualTo(42);

		try (HikariDataSource dataSource = database.newDataSource(1)) {
			// committed, claimed by the dead JVM, never started: what any other instance
			// sees is a lease
			for (String key : List.of(idempotent, mail)) {
				Map<String, Object> row = JdbcClient.create(dataSource).sql("""
						SELECT status, attempts, lease_owner, attempt_started_at FROM eec_effect_intent
						WHERE idempotency_key = ?""").param(key).query().singleRow();
				assertThat(row).containsEntry("status", "in_flight")
					.containsEntry("attempts", 1)
					.containsEntry("attempt_started_at", null);
				assertThat(row.get("lease_owner")).isNotNull();
			}
		}
		try (ConfigurableApplicationContext survivor = EffectInstances.start(database, TestEffects.Config.class,
				"ductor.effects.reconciler.interval=200ms", "ductor.effects.drainer.poll-interval=200ms")) {
			JdbcClient jdbc = JdbcClient.create(survivor.getBean(DataSource.class));
			await().atMost(Duration.ofSeconds(30))
				.until(() -> jdbc.sql("SELECT count(*) FROM eec_effect_intent WHERE status = 'completed'")
					.query(Long.class)
					.single() == 2);
			Map<String, Object> redriven = jdbc
				.sql("SELECT attempts, last_error FROM eec_effect_intent WHERE idempotency_key = ?")
				.param(idempotent)
				.query()
				.singleRow();
			assertThat(redriven.get("attempts")).isEqualTo(2);
			assertThat((String) redriven.get("last_error")).contains("expired during attempt 1");
			Map<String, Object> mailed = jdbc
				.sql("SELECT attempts, last_error FROM eec_effect_intent WHERE idempotency_key = ?")
				.param(mail)
				.query()
				.singleRow();
			assertThat(mailed.get("attempts")).isEqualTo(1);
			assertThat((String) mailed.get("last_error")).contains("expired before attempt 1 started");
			for (String key : List.of(idempotent, mail)) {
				assertThat(jdbc.sql("SELECT count(*) FROM test_call_log WHERE idempotency_key = ?")
					.param(key)
					.query(Long.class)
					.single()).as(key).isOne();
			}
		}
	}

}
