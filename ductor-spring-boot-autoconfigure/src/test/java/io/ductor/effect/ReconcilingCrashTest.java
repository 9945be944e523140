package io.ductor.effect;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
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
 * The outside check of reconcilers: a backlog for a receiver that cannot deduplicate,
 * drained by JVMs killed with SIGKILL again and again (during calls and during
 * reconciliation rounds), some calls losing their confirmation. Every letter whose
 * reconciler can answer ends completed, never in {@code needs_decision}, and reached the
 * receiver exactly once; a letter whose reconciler cannot tell reached it at most once
 * and is completed or waits for a decision.
 */
class ReconcilingCrashTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	private static final int INTENTS = 1000;

	/** Kills of the drainer JVM: two by default, four under {@code -Pchaos}. */
	private static final int KILLS = TestProfile.size(2, 4);

	private static final Path SENT_LOG = Paths.get("target", "reconciled-letters-sent.log");

	private Process running;

	@Test
	void lettersWhoseReconcilerCanAnswerNeverWaitForADecisionAndNoneIsSentTwice() throws Exception {
		TestDatabase database = postgres.database();
		Files.deleteIfExists(SENT_LOG);
		Files.createDirectories(SENT_LOG.getParent());
		try (HikariDataSource dataSource = database.newDataSource(2)) {
			JdbcClient jdbc = JdbcClient.create(dataSource);
			this.running = launch(database, 0);
			await().atMost(Duration.ofMinutes(1)).until(() -> ChildJvm.tableExists(jdbc, "eec_effect_intent"));
			jdbc.sql("""
					INSERT INTO eec_effect_intent (effect_name, idempotency_key, payload, payload_fingerprint, receiver,
					    max_attempts)
					SELECT 'letter', 'letter-' || n, jsonb_build_array('letter-' || n), 'f', 'NOT_IDEMPOTENT', 5
					FROM generate_series(1, ?::int) AS n""").param(INTENTS).update();
			Random random = new Random(17);
			for (int round = 1; round <= KILLS; round++) {
				long before = sent().size();
				await().atMost(Duration.ofMinutes(1)).until(() -> sent().size() > before + 20);
				// the kill lands at a random moment of the work: chaos, not a wait for
				// anything
				Thread.sleep(100 + random.nextInt(400));
				this.running.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
				this.running = launch(database, round);
			}
			await().atMost(Duration.ofMinutes(3))
				.until(() -> jdbc.sql(
						"SELECT count(*) FROM eec_effect_intent WHERE status IN ('pending', 'in_flight', 'reconciling')")
					.query(Long.class)
					.single() == 0);
			this.running.destroyForcibly().waitFor(30, TimeUnit.SECONDS);

			Map<String, Integer> callsPerKey = new HashMap<>();
			sent().forEach((line) -> callsPerKey.merge(line.split(" ")[0], 1, Integer::sum));
			Map<String, String> statusPerKey = new HashMap<>();
			jdbc.sql("SELECT idempotency_key, status FROM eec_effect_intent")
				.query((rs, row) -> statusPerKey.put(rs.getString(1), rs.getString(2)))
				.list();
			long reconciled = jdbc.sql("SELECT count(*) FROM eec_effect_intent WHERE reconcile_rounds > 0")
				.query(Long.class)
				.single();
			long interrupted = jdbc.sql("SELECT count(*) FROM eec_effect_intent WHERE reconcile_rounds > 1")
				.query(Long.class)
				.single();
			System.out.println("Reconciling crash test: " + KILLS + " kills, " + sent().size() + " calls, " + reconciled
					+ " reconciled, " + interrupted + " asked more than once, statuses "
					+ statusPerKey.values()
						.stream()
						.collect(java.util.stream.Collectors.groupingBy((s) -> s,
								java.util.stream.Collectors.counting())));

			assertThat(statusPerKey).hasSize(INTENTS);
			assertThat(callsPerKey).as("letters sent more than once")
				.allSatisfy((key, calls) -> assertThat(calls).as(key).isOne());
			statusPerKey.forEach((key, status) -> {
				if (CrashingReconciledMailerMain.Letters.number(key) % 10 != 0) {
					assertThat(status).as(key + ", whose reconciler can answer").isEqualTo("completed");
					assertThat(callsPerKey).as(key).containsKey(key);
				}
				else {
					assertThat(status).as(key + ", whose reconciler cannot tell").isIn("completed", "needs_decision");
				}
				if (status.equals("completed")) {
					assertThat(callsPerKey).as("completed " + key).containsKey(key);
				}
			});
			// every third letter lost its confirmation: there was something to reconcile
			assertThat(reconciled).isGreaterThanOrEqualTo(INTENTS / 3);
		}
	}

	@AfterEach
	void killTheDrainer() throws InterruptedException {
		if (this.running != null) {
			this.running.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
		}
	}

	private static List<String> sent() throws Exception {
		if (!Files.exists(SENT_LOG)) {
			return List.of();
		}
		return Files.readAllLines(SENT_LOG, StandardCharsets.UTF_8).stream().filter((line) -> !line.isEmpty()).toList();
	}

	private static Process launch(TestDatabase database, int run) throws Exception {
		return ChildJvm.start(CrashingReconciledMailerMain.class, "crash-reconciled-mailer-" + run + ".log",
				ChildJvm.connection(database, SENT_LOG.toAbsolutePath().toString()));
	}

}
