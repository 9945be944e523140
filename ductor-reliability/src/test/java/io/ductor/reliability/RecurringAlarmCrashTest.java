package io.ductor.reliability;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.jdbc.core.simple.JdbcClient;

import org.awaitility.Awaitility;

import io.ductor.reliability.alarms.AlarmApplication;
import io.ductor.test.ChildJvm;
import io.ductor.test.PostgresExtension;
import io.ductor.test.TestDatabase;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Recurring alarms under {@code kill -9}: three instances of {@link AlarmApplication}
 * (two alarms every second, one running the occurrences it missed, one skipping them) run
 * for a window during which instances are killed with SIGKILL and restarted (short: 15 s,
 * one kill; chaos: 60 s, two), then every instance is killed for ten seconds and one
 * comes back. Judged in SQL: one intent per occurrence key, every whole second of the
 * window present for the run-each alarm (the outage's included), none of the outage's for
 * the skip alarm, every occurrence completed and called.
 */
class RecurringAlarmCrashTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	record Attack(Duration window, int kills) {

		static Attack current() {
			return "chaos".equals(Scale.current().name()) ? new Attack(Duration.ofSeconds(60), 2)
					: new Attack(Duration.ofSeconds(15), 1);
		}

	}

	@Test
	void everyOccurrenceIsRecordedOnceAndRunsAcrossKillsAndAnOutageRunEachCatchesUpAndSkipDoesNot() throws Exception {
		Attack attack = Attack.current();
		TestDatabase database = postgres.database();
		Path directory = Report.directory("recurring-alarm-crash");
		Random random = new Random(20261201L);
		JdbcClient jdbc = JdbcClient.create(postgres.dataSource());
		List<Process> instances = new ArrayList<>();
		Map<String, Object> figures = new LinkedHashMap<>();
		List<String> settledKeys = new ArrayList<>();
		int generation = 0;
		try {
			for (int i = 0; i < 3; i++) {
				instances.add(launch(directory, database, "a" + i + "-g" + generation++));
			}
			awaitOccurrences(jdbc, 2, Duration.ofSeconds(90));
			long windowStart = System.nanoTime();
			long between = attack.window().toMillis() / (attack.kills() + 1);
			for (int kill = 0; kill < attack.kills(); kill++) {
				// not a wait: a random moment for the next kill
				Thread.sleep(between - 1000 + random.nextInt(2000));
				int victim = kill % 3;
				instances.get(victim).destroyForcibly().waitFor(10, TimeUnit.SECONDS);
				Thread.sleep(1000 + random.nextInt(1000));
				instances.set(victim, launch(directory, database, "a" + victim + "-g" + generation++));
			}
			// not a wait: the rest of the attack window
			Thread.sleep(Math.max(0, attack.window().toMillis() - (System.nanoTime() - windowStart) / 1_000_000));
			// every instance down for ten seconds
			for (Process instance : instances) {
				instance.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
			}
			Instant downAt = Instant.now();
			Thread.sleep(10_000);
			instances.set(0, launch(directory, database, "a0-g" + generation++));
			Instant upAt = Instant.now();
			long before = count(jdbc);
			// caught up past the outage and settled: nothing of the alarms pending or in
			// flight. The alarms go on firing until the instance stops, so what is
			// judged complete is what existed at the settled snapshot.
			awaitCondition(() -> count(jdbc) > before + 12, Duration.ofSeconds(90));
			awaitCondition(() -> settled(jdbc, settledKeys), Duration.ofSeconds(60));
			figures.put("outage", downAt + " .. " + upAt);
		}
		finally {
			for (Process instance : instances) {
				instance.destroy();
				if (!instance.waitFor(20, TimeUnit.SECONDS)) {
					instance.destroyForcibly();
				}
			}
		}

		List<Instant> each = occurrences(jdbc, "beat-each");
		List<Instant> skip = occurrences(jdbc, "beat-skip");
		figures.put("occurrences run-each", each.size());
		figures.put("occurrences skip", skip.size());
		// one intent per key, whatever happened
		assertThat(jdbc.sql("SELECT count(*) - count(DISTINCT idempotency_key) FROM eec_effect_intent")
			.query(Long.class)
			.single()).isZero();
		// run-each: every whole second from the first occurrence to the last, the
		// outage's included
		assertThat(each.size()).isGreaterThan((int) attack.window().toSeconds());
		for (int i = 1; i < each.size(); i++) {
			assertThat(each.get(i)).as("occurrence after " + each.get(i - 1)).isEqualTo(each.get(i - 1).plusSeconds(1));
		}
		// skip: the same, except one gap, the outage's, of at least its ten seconds less
		// the grace
		List<Duration> gaps = new ArrayList<>();
		for (int i = 1; i < skip.size(); i++) {
			Duration gap = Duration.between(skip.get(i - 1), skip.get(i));
			if (!gap.equals(Duration.ofSeconds(1))) {
				gaps.add(gap);
			}
		}
		figures.put("skip gaps", gaps);
		assertThat(gaps).singleElement()
			.satisfies((gap) -> assertThat(gap).isGreaterThanOrEqualTo(Duration.ofSeconds(8)));
		// both alarms fire from their declaration on; the instance declares them one
		// after the other, sometimes across a second's boundary
		assertThat(Duration.between(each.get(0), skip.get(0))).isBetween(Duration.ofSeconds(-1), Duration.ofSeconds(1));
		// every occurrence of the settled snapshot completed and reached the receiver at
		// least once
		assertThat(settledKeys).hasSizeGreaterThan((int) attack.window().toSeconds());
		assertThat(jdbc
			.sql("SELECT count(*) FROM eec_effect_intent WHERE status <> 'completed' AND idempotency_key = ANY(?)")
			.param(settledKeys.toArray(String[]::new))
			.query(Long.class)
			.single()).isZero();
		assertThat(jdbc.sql("""
				SELECT count(*) FROM eec_effect_intent i
				WHERE i.idempotency_key = ANY(?)
				  AND NOT EXISTS (SELECT 1 FROM beat_call c WHERE c.idempotency_key = i.idempotency_key)""")
			.param(settledKeys.toArray(String[]::new))
			.query(Long.class)
			.single()).isZero();
		long repeated = jdbc.sql("SELECT count(*) - count(DISTINCT idempotency_key) FROM beat_call")
			.query(Long.class)
			.single();
		long retried = jdbc.sql("SELECT COALESCE(sum(GREATEST(attempts - 1, 0)), 0) FROM eec_effect_intent")
			.query(Long.class)
			.single();
		figures.put("receiver calls repeated (same key)", repeated);
		figures.put("attempts after the first", retried);
		// a call is repeated only by a retry of an attempt a kill interrupted
		assertThat(repeated).isLessThanOrEqualTo(retried);
		Files.writeString(directory.resolve("figures.txt"), figures.toString());
		System.out.println("recurring-alarm crash (" + Scale.current().name() + "): " + figures);
	}

	/**
	 * Whether no intent is pending or in flight, judged on one snapshot; if so,
	 * {@code keys} receives every intent's key of that snapshot.
	 */
	private static boolean settled(JdbcClient jdbc, List<String> keys) {
		List<Map<String, Object>> rows = jdbc.sql("SELECT status, idempotency_key FROM eec_effect_intent")
			.query()
			.listOfRows();
		if (rows.stream().anyMatch((row) -> List.of("pending", "in_flight").contains(row.get("status")))) {
			return false;
		}
		keys.clear();
		rows.forEach((row) -> keys.add((String) row.get("idempotency_key")));
		return true;
	}

	private static long count(JdbcClient jdbc) {
		return jdbc.sql("SELECT count(*) FROM eec_effect_intent").query(Long.class).single();
	}

	private static List<Instant> occurrences(JdbcClient jdbc, String alarm) {
		String prefix = "alarm:" + alarm + "@";
		return jdbc.sql("SELECT idempotency_key FROM eec_effect_intent WHERE idempotency_key LIKE ?")
			.param(prefix + "%")
			.query(String.class)
			.list()
			.stream()
			.map((key) -> Instant.parse(key.substring(prefix.length())))
			.sorted()
			.toList();
	}

	private static void awaitOccurrences(JdbcClient jdbc, int atLeast, Duration timeout) throws InterruptedException {
		awaitCondition(() -> ChildTables.exist(jdbc) && count(jdbc) >= atLeast, timeout);
	}

	private static void awaitCondition(java.util.function.BooleanSupplier condition, Duration timeout)
			throws InterruptedException {
		Awaitility.await().atMost(timeout).pollInterval(Duration.ofMillis(200)).until(condition::getAsBoolean);
	}

	private static Process launch(Path directory, TestDatabase database, String name) throws IOException {
		return ChildJvm.start(AlarmApplication.class, directory.resolve(name + ".log"), List.of("-Xmx160m", "-Xss512k"),
				ChildJvm.arguments(database.springProperties()));
	}

	/** Whether the instances have created Ductor's tables yet. */
	private static final class ChildTables {

		static boolean exist(JdbcClient jdbc) {
			return jdbc.sql("SELECT to_regclass('eec_effect_intent') IS NOT NULL").query(Boolean.class).single();
		}

	}

}
