package io.ductor.effect;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;

import javax.sql.DataSource;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.simple.JdbcClient;

import io.ductor.run.TickService;
import io.ductor.test.PostgresExtension;
import io.ductor.test.TestDatabase;
import io.ductor.test.TestProfile;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A saga under crashes: runs that fail after two completed steps (reserve, charge), while
 * the JVM that drains their compensations is killed with SIGKILL again and again. Every
 * compensation is recorded exactly once, dispatched at least once with its stable key,
 * the refund always before the release (every call of the one before any call of the
 * other), the deduplicating receiver applies each exactly once, and every run ends
 * compensated.
 */
class SagaCrashTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	private static final int RUNS = 300;

	/**
	 * Kills of the drainer JVM: two by default (at least two are asserted), four under
	 * {@code -Pchaos}.
	 */
	private static final int KILLS = TestProfile.size(2, 4);

	private Process running;

	@Test
	void killedDrainersCompensateEveryFailedRunOnceInReverseOrder() throws Exception {
		TestDatabase database = postgres.database();
		// this instance only ticks (its drainer is off): the killed JVM dispatches
		try (ConfigurableApplicationContext app = EffectInstances.start(database, SagaEffects.Config.class,
				"ductor.effects.drainer.enabled=false", "ductor.effects.reconciler.enabled=false")) {
			TickService ticks = app.getBean(TickService.class);
			SagaEffects saga = app.getBean(SagaEffects.class);
			JdbcClient jdbc = JdbcClient.create(app.getBean(DataSource.class));
			this.running = launch(database, 0);
			List<String> runs = new ArrayList<>();
			for (int i = 0; i < RUNS; i++) {
				String run = "saga-" + i;
				runs.add(run);
				ticks.start("order", run, 0);
				ticks.tick(run, "reserve", Integer.class, (state, tick) -> {
					saga.reserve(run, "book-1");
					return state + 1;
				});
				ticks.tick(run, "charge", Integer.class, (state, tick) -> {
					saga.charge(run, 4500);
					return state + 1;
				});
			}
			await().atMost(Duration.ofMinutes(2))
				.until(() -> count(jdbc,
						"SELECT count(*) FROM eec_effect_intent WHERE status = 'completed' AND compensation_of IS NULL") == 2L
								* RUNS);
			for (String run : runs) {
				ticks.tick(run, "ship", Integer.class, (state, tick) -> {
					tick.fail("out of stock at shipping");
					return state;
				});
			}
			Random random = new Random(20);
			int kills = 0;
			for (int round = 1; round <= KILLS && compensated(jdbc) < RUNS; round++) {
				long before = compensationCalls(jdbc);
				await().atMost(Duration.ofMinutes(1)).until(() -> compensationCalls(jdbc) > before);
				// the kill lands at a random moment of the work: chaos, not a wait for
				// anything
				Thread.sleep(100 + random.nextInt(400));
				this.running.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
				kills++;
				this.running = launch(database, round);
			}
			await().atMost(Duration.ofMinutes(3)).until(() -> compensated(jdbc) == RUNS);
			this.running.destroyForcibly().waitFor(30, TimeUnit.SECONDS);

			Map<String, Object> result = jdbc
				.sql("""
						SELECT (SELECT count(*) FROM eec_effect_intent WHERE compensation_of IS NOT NULL) AS recorded,
						       (SELECT count(DISTINCT idempotency_key) FROM eec_effect_intent
						        WHERE idempotency_key LIKE 'compensate:%') AS distinct_recorded,
						       (SELECT count(*) FROM eec_effect_intent
						        WHERE compensation_of IS NOT NULL AND status = 'completed') AS completed,
						       (SELECT count(*) FROM test_applied WHERE idempotency_key LIKE 'compensate:%') AS applied,
						       (SELECT count(DISTINCT idempotency_key) FROM test_call_log
						        WHERE idempotency_key LIKE 'compensate:%') AS distinct_calls,
						       (SELECT count(*) FROM test_call_log WHERE idempotency_key LIKE 'compensate:%') AS calls,
						       (SELECT count(*) FROM eec_effect_intent c JOIN eec_effect_intent o ON o.id = c.compensation_of
						        WHERE c.idempotency_key <> 'compensate:' || o.idempotency_key) AS wrong_keys""")
				.query()
				.singleRow();
			// per run: every call of the refund comes before any call of the release
			long outOfOrder = count(jdbc,
					"""
							SELECT count(*) FROM eec_run r
							WHERE (SELECT max(seq) FROM test_call_log WHERE idempotency_key = 'compensate:charge:' || r.id)
							   >= (SELECT min(seq) FROM test_call_log WHERE idempotency_key = 'compensate:reserve:' || r.id)""");
			System.out.println("Saga crash test: " + kills + " kills, " + result + ", out of order " + outOfOrder);
			assertThat(result).containsEntry("recorded", 2L * RUNS)
				.containsEntry("distinct_recorded", 2L * RUNS)
				.containsEntry("completed", 2L * RUNS)
				.containsEntry("applied", 2L * RUNS)
				.containsEntry("distinct_calls", 2L * RUNS)
				.containsEntry("wrong_keys", 0L);
			assertThat((Long) result.get("calls")).isGreaterThanOrEqualTo(2L * RUNS);
			assertThat(outOfOrder).isZero();
			assertThat(kills).as("the drainer was killed during compensation").isGreaterThanOrEqualTo(2);
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
		return ChildJvm.start(CrashingSagaMain.class, "crash-saga-" + run + ".log", ChildJvm.connection(database));
	}

	private static long compensated(JdbcClient jdbc) {
		return count(jdbc, "SELECT count(*) FROM eec_run WHERE compensation = 'compensated'");
	}

	private static long compensationCalls(JdbcClient jdbc) {
		return count(jdbc, "SELECT count(*) FROM test_call_log WHERE idempotency_key LIKE 'compensate:%'");
	}

	private static long count(JdbcClient jdbc, String sql) {
		return jdbc.sql(sql).query(Long.class).single();
	}

}
