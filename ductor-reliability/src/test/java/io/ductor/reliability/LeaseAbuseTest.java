package io.ductor.reliability;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.jdbc.core.simple.JdbcClient;

import org.awaitility.Awaitility;

import io.ductor.reliability.workload.Receivers;
import io.ductor.reliability.workload.WorkloadSchema;
import io.ductor.test.PostgresExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Clock and lease abuse. An attempt whose lease is lost while it still runs (its lease
 * expired under it, or its JVM was frozen with SIGSTOP) must never settle the intent: the
 * newer attempt's completion stays authoritative. The {@code probe} effect's first
 * attempt is slow, and a late attempt that finds a newer one applied fails on purpose, so
 * a broken fence would show as an intent that left {@code completed} or carries the late
 * attempt's error.
 */
@Tag("long")
class LeaseAbuseTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	@Test
	void anAttemptThatOutlivesItsLeaseCannotSettleTheIntentOfTheNewerAttempt() throws Exception {
		Path directory = Report.directory("lease-outlived");
		WorkloadSchema.create(postgres.dataSource());
		JdbcClient jdbc = JdbcClient.create(postgres.dataSource());
		// the first instance holds a long lease and no reconciler: only the lease's own
		// expiry can take the intent
		try (Workload first = Workload.launch(directory, postgres.database(), "slow", 0, Workload.freePort(),
				"workload.ticking=false", "ductor.effects.drainer.lease=60s",
				"ductor.effects.reconciler.enabled=false")) {
			first.awaitReady(Duration.ofSeconds(90));
			insertProbes(jdbc, "outlived", 1, 20_000);
			awaitUntil(() -> count(jdbc, "SELECT count(*) FROM eec_effect_intent WHERE status = 'in_flight'") == 1,
					"the first instance claims the probe");
			String owner = jdbc.sql("SELECT lease_owner FROM eec_effect_intent").query(String.class).single();
			assertThat(owner).startsWith(first.pid() + "@");
			Workload second = Workload.launch(directory, postgres.database(), "fast", 0, Workload.freePort(),
					"workload.ticking=false", "ductor.effects.reconciler.interval=200ms");
			try {
				second.awaitReady(Duration.ofSeconds(90));
				// the lease ends while attempt 1 still runs (a clock jump, a missed
				// heartbeat)
				long expired = System.nanoTime();
				jdbc.sql("UPDATE eec_effect_intent SET lease_expires_at = now() - interval '1 second'").update();
				awaitUntil(() -> count(jdbc, "SELECT count(*) FROM eec_effect_intent WHERE status = 'completed'") == 1,
						"the newer attempt completes");
				Duration takeover = Duration.ofNanos(System.nanoTime() - expired);
				awaitUntil(() -> count(jdbc, "SELECT count(*) FROM wl_raw_calls WHERE outcome = 'late'") == 1,
						"the outlived attempt finishes");
				// its outcome reaches the completion thread and the fenced update
				awaitUntil(() -> logContains(first, "arrived after their lease was lost and were ignored"),
						"the first instance reports the late outcome as ignored");
				Map<String, Object> intent = jdbc.sql("SELECT status, attempts, last_error FROM eec_effect_intent")
					.query()
					.singleRow();
				assertThat(intent.get("status")).isEqualTo("completed");
				assertThat((String) intent.get("last_error")).doesNotContain(Receivers.LATE_ATTEMPT);
				assertThat(count(jdbc, "SELECT count(*) FROM wl_dedup_receiver")).isEqualTo(1);
				assertThat(first.logText()).contains("arrived after their lease was lost and were ignored");
				new Report("Lease outlived").parameter("probe", "1 intent, first attempt takes 20 s")
					.parameter("first instance", "lease 60 s, no reconciler; claims attempt 1 (" + owner + ")")
					.parameter("fault", "lease_expires_at set in the past while attempt 1 runs")
					.parameter("second instance", "reconciler every 200 ms")
					.figure("lease expiry to newer attempt completed", Report.millis(takeover))
					.figure("attempts", intent.get("attempts"))
					.figure("final status", intent.get("status"))
					.figure("late outcome ignored by the fence", "yes (logged by the first instance)")
					.figure("applied at the deduplicating receiver", 1)
					.write();
			}
			finally {
				second.close();
			}
		}
	}

	private static boolean logContains(Workload workload, String text) {
		try {
			return workload.logText().contains(text);
		}
		catch (java.io.IOException ex) {
			return false;
		}
	}

	@Test
	void aFrozenJvmHoldingClaimsLosesThemAndItsLateOutcomesAreFenced() throws Exception {
		Scale scale = Scale.current();
		Path directory = Report.directory("paused-jvm");
		WorkloadSchema.create(postgres.dataSource());
		JdbcClient jdbc = JdbcClient.create(postgres.dataSource());
		int probes = 0;
		long stolen = 0;
		try (Workload frozen = Workload.launch(directory, postgres.database(), "frozen", 0, Workload.freePort(),
				"workload.ticking=false", "ductor.effects.drainer.lease=2s");
				Workload other = Workload.launch(directory, postgres.database(), "other", 0, Workload.freePort(),
						"workload.ticking=false", "ductor.effects.drainer.lease=2s",
						"ductor.effects.reconciler.interval=200ms")) {
			frozen.awaitReady(Duration.ofSeconds(90));
			other.awaitReady(Duration.ofSeconds(90));
			// the class's database may hold the other scenario's probe
			jdbc.sql("TRUNCATE eec_effect_intent, wl_dedup_receiver, wl_raw_calls").update();
			for (int round = 1; round <= scale.pauses(); round++) {
				// the other instance is frozen for a moment, so that the first one claims
				// every probe
				other.pause();
				insertProbes(jdbc, "pause" + round, 12, 3000);
				probes += 12;
				awaitUntil(() -> count(jdbc, "SELECT count(*) FROM eec_effect_intent WHERE status = 'in_flight'") == 12,
						"the instance to be frozen claims every probe");
				frozen.pause();
				other.resume();
				// not a wait: the freeze, longer than a lease
				Thread.sleep(scale.pause().toMillis());
				long redriven = count(jdbc,
						"SELECT count(*) FROM eec_effect_intent WHERE attempts >= 2 "
								+ "AND last_error LIKE 'Lease of %expired%' AND idempotency_key LIKE 'probe:pause"
								+ round + "-%'");
				stolen += redriven;
				assertThat(redriven).as("leases of the frozen JVM redriven by the other instance").isEqualTo(12);
				awaitUntil(
						() -> count(jdbc, "SELECT count(*) FROM eec_effect_intent WHERE status = 'completed'") == count(
								jdbc, "SELECT count(*) FROM eec_effect_intent"),
						"the other instance completes them");
				frozen.resume();
			}
			// the resumed JVM drains again: the late first attempts fail and are fenced,
			// the redriven ones complete
			awaitUntil(() -> count(jdbc, "SELECT count(*) FROM eec_effect_intent WHERE status = 'completed'") == count(
					jdbc, "SELECT count(*) FROM eec_effect_intent"), "every probe completes");
			// the resumed JVM's first attempts that were running when it froze (3 s each)
			// run out late and are fenced; of the claims it had queued, those a worker
			// took before the heartbeat found their leases lost run late too, the rest
			// never start. Settled: every first attempt that started has run out, and
			// the last one started longer ago than a first attempt lasts.
			awaitUntil(() -> jdbc.sql("""
					SELECT count(*) FILTER (WHERE outcome = 'late')
					       = count(*) FILTER (WHERE outcome = 'started' AND attempt = 1)
					   AND COALESCE(max(called_at) FILTER (WHERE outcome = 'started' AND attempt = 1)
					       < clock_timestamp() - interval '4 seconds', true)
					FROM wl_raw_calls""").query(Boolean.class).single(),
					"every late first attempt that started has run");
			// not a wait: a quiet window in which no late attempt may still change an
			// intent
			Thread.sleep(1500);
			long total = count(jdbc, "SELECT count(*) FROM eec_effect_intent");
			long completed = count(jdbc, "SELECT count(*) FROM eec_effect_intent WHERE status = 'completed'");
			long poisoned = count(jdbc,
					"SELECT count(*) FROM eec_effect_intent WHERE last_error LIKE '%" + Receivers.LATE_ATTEMPT + "%'");
			long applied = count(jdbc, "SELECT count(*) FROM wl_dedup_receiver");
			long late = count(jdbc, "SELECT count(*) FROM wl_raw_calls WHERE outcome = 'late'");
			long startedFirst = count(jdbc,
					"SELECT count(*) FROM wl_raw_calls WHERE outcome = 'started' AND attempt = 1");
			long rawOk = count(jdbc, "SELECT count(*) FROM wl_raw_calls WHERE outcome = 'ok'");
			assertThat(completed).isEqualTo(total).isEqualTo(probes);
			assertThat(poisoned).as("intents settled by a late attempt").isZero();
			assertThat(applied).isEqualTo(probes);
			// each pause froze running first attempts; every first attempt that started
			// ran out late and was fenced
			assertThat(late).as("late first attempts")
				.isEqualTo(startedFirst)
				.isBetween((long) scale.pauses(), (long) probes);
			new Report("Paused JVM").parameter("pauses (SIGSTOP/SIGCONT)", scale.pauses())
				.parameter("pause", scale.pause().toSeconds() + " s, lease 2 s")
				.parameter("probes per pause", "12, first attempt 3 s, all claimed by the JVM that is frozen")
				.figure("claims redriven while frozen", stolen)
				.figure("intents completed", completed + " of " + total)
				.figure("late first attempts that ran after SIGCONT (failed on purpose)", late)
				.figure("queued first attempts found lost after SIGCONT, never started", probes - startedFirst)
				.figure("late outcomes ignored by the fence (from the frozen JVM's log)", ignored(frozen))
				.figure("intents settled by a late attempt (must be 0)", poisoned)
				.figure("applied at the deduplicating receiver", applied)
				.figure("calls at the raw receiver", rawOk)
				.write();
		}
	}

	private static void insertProbes(JdbcClient jdbc, String name, int count, int firstAttemptMillis) {
		jdbc.sql("""
				INSERT INTO eec_effect_intent (effect_name, idempotency_key, payload, payload_fingerprint, max_attempts)
				SELECT 'Receivers.probe', 'probe:' || :name || '-' || n, jsonb_build_array(:name || '-' || n, :millis),
				    'reliability', 50
				FROM generate_series(1, :count) AS n""")
			.param("name", name)
			.param("millis", firstAttemptMillis)
			.param("count", count)
			.update();
		jdbc.sql("SELECT pg_notify('ductor_effects', '')").query().singleRow();
	}

	private static long ignored(Workload workload) throws java.io.IOException {
		java.util.regex.Matcher matcher = java.util.regex.Pattern
			.compile("(\\d+) effect outcome\\(s\\) arrived after their lease was lost")
			.matcher(workload.logText());
		long ignored = 0;
		while (matcher.find()) {
			ignored += Long.parseLong(matcher.group(1));
		}
		return ignored;
	}

	private static long count(JdbcClient jdbc, String sql) {
		return jdbc.sql(sql).query(Long.class).single();
	}

	private static void awaitUntil(java.util.function.BooleanSupplier condition, String what)
			throws InterruptedException {
		Awaitility.await(what)
			.atMost(Duration.ofSeconds(60))
			.pollInterval(Duration.ofMillis(50))
			.until(condition::getAsBoolean);
	}

}
