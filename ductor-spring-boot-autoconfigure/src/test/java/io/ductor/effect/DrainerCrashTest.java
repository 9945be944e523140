package io.ductor.effect;

import java.time.Duration;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;

import com.zaxxer.hikari.HikariDataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.jdbc.core.simple.JdbcClient;

import io.ductor.test.PostgresExtension;
import io.ductor.test.TestDatabase;
import io.ductor.test.TestProfile;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A drainer JVM killed with SIGKILL again and again while it dispatches: every intent
 * still ends completed, the deduplicating receiver applies each exactly once, and the raw
 * receiver saw each at least once.
 */
class DrainerCrashTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	private static final int INTENTS = 3000;

	/** Kills of the drainer JVM: two by default, five under {@code -Pchaos}. */
	private static final int KILLS = TestProfile.size(2, 5);

	private Process running;

	@Test
	void killedDrainersLoseNothingAndTheDeduplicatingReceiverAppliesEachIntentOnce() throws Exception {
		TestDatabase database = postgres.database();
		try (HikariDataSource dataSource = database.newDataSource(2)) {
			JdbcClient jdbc = JdbcClient.create(dataSource);
			// the first run creates the schema and the receiver's tables; then the
			// backlog arrives
			this.running = launch(database, 0);
			await().atMost(Duration.ofMinutes(1))
				.until(() -> ChildJvm.tableExists(jdbc, "test_applied")
						&& ChildJvm.tableExists(jdbc, "eec_effect_intent"));
			jdbc.sql(
					"""
							INSERT INTO eec_effect_intent (effect_name, idempotency_key, payload, payload_fingerprint, max_attempts)
							SELECT 'ship', 'ship:crash-' || n, jsonb_build_array('crash-' || n, '[]'::jsonb), 'f', 100
							FROM generate_series(1, ?::int) AS n""")
				.param(INTENTS)
				.update();
			Random random = new Random(7);
			int kills = 0;
			for (int round = 1; round <= KILLS; round++) {
				long before = calls(jdbc);
				await().atMost(Duration.ofMinutes(1)).until(() -> calls(jdbc) > before);
				// the kill lands at a random moment of the work: chaos, not a wait for
				// anything
				Thread.sleep(100 + random.nextInt(400));
				this.running.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
				kills++;
				this.running = launch(database, round);
			}
			await().atMost(Duration.ofMinutes(3)).until(() -> completed(jdbc) == INTENTS);
			this.running.destroyForcibly().waitFor(30, TimeUnit.SECONDS);

			Map<String, Object> result = jdbc.sql("""
					SELECT (SELECT count(*) FROM eec_effect_intent WHERE status = 'completed') AS completed,
					       (SELECT count(*) FROM test_applied) AS applied,
					       (SELECT count(*) FROM test_call_log) AS calls,
					       (SELECT count(DISTINCT idempotency_key) FROM test_call_log) AS distinct_calls""")
				.query()
				.singleRow();
			System.out.println("Drainer crash test: " + kills + " kills, " + result);
			assertThat(result).containsEntry("completed", (long) INTENTS)
				.containsEntry("applied", (long) INTENTS)
				.containsEntry("distinct_calls", (long) INTENTS);
			assertThat((Long) result.get("calls")).isGreaterThanOrEqualTo(INTENTS);
		}
	}

	/** Never leave a drainer JVM behind, whatever the test's outcome. */
	@AfterEach
	void killTheDrainer() throws InterruptedException {
		if (this.running != null) {
			this.running.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
		}
	}

	private static Process launch(TestDatabase database, int run) throws Exception {
		return ChildJvm.start(CrashingDrainerMain.class, "crash-drainer-" + run + ".log",
				ChildJvm.connection(database));
	}

	private static long calls(JdbcClient jdbc) {
		return jdbc.sql("SELECT count(*) FROM test_call_log").query(Long.class).single();
	}

	private static long completed(JdbcClient jdbc) {
		return jdbc.sql("SELECT count(*) FROM eec_effect_intent WHERE status = 'completed'").query(Long.class).single();
	}

}
