package io.ductor.reliability;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.jdbc.core.simple.JdbcClient;

import org.awaitility.Awaitility;

import io.ductor.modulith.ModulithPublications;
import io.ductor.reliability.modulith.ModulithCrashApplication;
import io.ductor.test.ChildJvm;
import io.ductor.test.PostgresExtension;
import io.ductor.test.TestDatabase;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Spring Modulith's listeners on Ductor under {@code kill -9}: two instances of
 * {@link ModulithCrashApplication} place orders in transactions (one in ten rolled back)
 * and run two {@code @ApplicationModuleListener}s per order through Ductor's drainer;
 * instances are killed with SIGKILL while listeners run and restarted (short: a 15 s
 * window, two kills; chaos: 60 s, six), then every instance is killed and one comes back
 * without publishing. Judged in SQL: one publication per listener for every committed
 * order and none for a rolled-back one, every publication completed, every listener
 * called at least once with its publication's stable key, and the idempotent listener's
 * entry booked exactly once per order.
 */
class ModulithCrashTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	record Attack(Duration window, int kills) {

		static Attack current() {
			return "chaos".equals(Scale.current().name()) ? new Attack(Duration.ofSeconds(60), 6)
					: new Attack(Duration.ofSeconds(15), 2);
		}

	}

	@Test
	void everyListenerInvocationCompletesWithAStableKeyAndTheIdempotentListenerAppliesItOnce() throws Exception {
		Attack attack = Attack.current();
		TestDatabase database = postgres.database();
		Path directory = Report.directory("modulith-crash");
		Random random = new Random(20261205L);
		JdbcClient jdbc = JdbcClient.create(postgres.dataSource());
		jdbc.sql(ModulithCrashApplication.SCHEMA).update();
		List<Process> instances = new ArrayList<>();
		Map<String, Object> figures = new LinkedHashMap<>();
		int generation = 0;
		int interrupted = 0;
		try {
			for (int i = 0; i < 2; i++) {
				instances.add(launch(directory, database, "m" + i + "-g" + generation++, true));
			}
			await(() -> count(jdbc, "SELECT count(*) FROM ledger_entry") >= 20, Duration.ofSeconds(120));
			long between = attack.window().toMillis() / (attack.kills() + 1);
			long windowStart = System.nanoTime();
			for (int kill = 0; kill < attack.kills(); kill++) {
				// not a wait: a random moment for the next kill
				Thread.sleep(between - 500 + random.nextInt(1000));
				int victim = kill % 2;
				// listeners of the victim are running: in flight under its lease
				interrupted += inFlight(jdbc);
				instances.get(victim).destroyForcibly().waitFor(10, TimeUnit.SECONDS);
				Thread.sleep(500 + random.nextInt(1000));
				instances.set(victim, launch(directory, database, "m" + victim + "-g" + generation++, true));
			}
			// not a wait: the rest of the attack window
			Thread.sleep(Math.max(0, attack.window().toMillis() - (System.nanoTime() - windowStart) / 1_000_000));
			interrupted += inFlight(jdbc);
			for (Process instance : instances) {
				instance.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
			}
			instances.clear();
			instances.add(launch(directory, database, "m0-g" + generation, false));
			// the leases of the killed attempts expire and the reconciler redrives them
			await(() -> count(jdbc, "SELECT count(*) FROM eec_effect_intent WHERE effect_name = '"
					+ ModulithPublications.EFFECT_NAME + "' AND status <> 'completed'") == 0, Duration.ofSeconds(180));
		}
		finally {
			for (Process instance : instances) {
				instance.destroy();
				if (!instance.waitFor(20, TimeUnit.SECONDS)) {
					instance.destroyForcibly();
				}
			}
		}

		long orders = count(jdbc, "SELECT count(*) FROM crash_order");
		long rolledBack = count(jdbc,
				"SELECT count(*) FROM generate_series(1, (SELECT max(seq) FROM crash_order)) s(seq) WHERE s.seq % 10 = 0");
		figures.put("orders committed", orders);
		figures.put("kills", attack.kills() + 2);
		figures.put("publications in flight at the kills", interrupted);
		assertThat(orders).isGreaterThan(100);
		// two publications per committed order, one per listener, all completed; none
		// for a rolled-back order
		assertThat(
				count(jdbc,
						"SELECT count(*) FROM eec_effect_intent WHERE effect_name = '"
								+ ModulithPublications.EFFECT_NAME + "' AND status = 'completed'"))
			.isEqualTo(2 * orders);
		assertThat(count(jdbc, """
				SELECT count(*) FROM crash_order o
				WHERE (SELECT count(DISTINCT payload->>1) FROM eec_effect_intent i
				       WHERE i.payload->3->>'seq' = o.seq::text) <> 2""")).isZero();
		assertThat(count(jdbc, "SELECT count(*) FROM eec_effect_intent WHERE (payload->3->>'seq')::bigint % 10 = 0"))
			.isZero();
		assertThat(rolledBack).isPositive();
		// every publication's listener was called with its key, and only with keys of
		// publications
		assertThat(count(jdbc, """
				SELECT count(*) FROM eec_effect_intent i
				WHERE NOT EXISTS (SELECT 1 FROM listener_call c WHERE c.publication_key = i.idempotency_key)"""))
			.isZero();
		assertThat(count(jdbc, """
				SELECT count(*) FROM listener_call c
				WHERE NOT EXISTS (SELECT 1 FROM eec_effect_intent i
				                  WHERE i.idempotency_key = c.publication_key
				                    AND (i.payload->3->>'seq')::bigint = c.seq)""")).isZero();
		// the idempotent listener booked every committed order exactly once
		assertThat(count(jdbc, "SELECT count(*) FROM ledger_entry")).isEqualTo(orders);
		assertThat(
				count(jdbc, "SELECT count(*) FROM (SELECT seq FROM ledger_entry GROUP BY seq HAVING count(*) > 1) d"))
			.isZero();
		long repeated = count(jdbc, "SELECT count(*) - count(DISTINCT publication_key) FROM listener_call");
		long retried = count(jdbc, "SELECT COALESCE(sum(GREATEST(attempts - 1, 0)), 0) FROM eec_effect_intent");
		figures.put("listener calls", count(jdbc, "SELECT count(*) FROM listener_call"));
		figures.put("listener calls repeated (same key)", repeated);
		figures.put("attempts after the first", retried);
		// a call is repeated only by a redrive of an attempt a kill interrupted
		assertThat(repeated).isLessThanOrEqualTo(retried);
		Files.writeString(directory.resolve("figures.txt"), figures.toString());
		System.out.println("modulith crash (" + Scale.current().name() + "): " + figures);
	}

	private static int inFlight(JdbcClient jdbc) {
		return (int) count(jdbc, "SELECT count(*) FROM eec_effect_intent WHERE status = 'in_flight'");
	}

	private static long count(JdbcClient jdbc, String sql) {
		return jdbc.sql(sql).query(Long.class).single();
	}

	private static void await(BooleanSupplier condition, Duration timeout) throws InterruptedException {
		Awaitility.await().atMost(timeout).pollInterval(Duration.ofMillis(200)).until(condition::getAsBoolean);
	}

	private static Process launch(Path directory, TestDatabase database, String name, boolean publish)
			throws IOException {
		List<String> args = new ArrayList<>(ChildJvm.arguments(database.springProperties()));
		args.addAll(List.of("--crash.publish=" + publish, "--ductor.effects.drainer.lease=3s",
				"--ductor.effects.drainer.poll-interval=100ms", "--ductor.effects.reconciler.interval=1s",
				"--ductor.effects.backoff.initial=100ms", "--ductor.effects.backoff.max=1s",
				"--ductor.effects.max-attempts=100", "--spring.datasource.hikari.maximum-pool-size=8",
				"--spring.main.banner-mode=off"));
		return ChildJvm.start(ModulithCrashApplication.class, directory.resolve(name + ".log"),
				List.of("-Xmx192m", "-Xss512k"), args);
	}

}
