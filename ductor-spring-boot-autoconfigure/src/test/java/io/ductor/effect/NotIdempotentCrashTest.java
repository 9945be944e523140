package io.ductor.effect;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
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
 * A backlog for a receiver that cannot deduplicate, drained by JVMs killed with SIGKILL
 * again and again: after recovery every intent is either completed or parked for a
 * decision, the parked ones are exactly the attempts the receiver saw start without a
 * recorded outcome (never one it did not see), and no letter reached the receiver twice.
 */
class NotIdempotentCrashTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	private static final int INTENTS = 1500;

	/** Kills of the drainer JVM: two by default, four under {@code -Pchaos}. */
	private static final int KILLS = TestProfile.size(2, 4);

	/** The drainer's concurrency in {@link CrashingMailerMain}. */
	private static final int CONCURRENCY = 4;

	private static final Path RECEIVER_LOG = Paths.get("target", "crash-letters-received.log");

	private Process running;

	@Test
	void afterKillsOnlyTheAttemptsTheReceiverSawStartAreParkedAndNoneRunsTwice() throws Exception {
		TestDatabase database = postgres.database();
		Files.deleteIfExists(RECEIVER_LOG);
		Files.createDirectories(RECEIVER_LOG.getParent());
		try (HikariDataSource dataSource = database.newDataSource(2)) {
			JdbcClient jdbc = JdbcClient.create(dataSource);
			// the first run creates the schema; then the backlog arrives
			this.running = launch(database, 0);
			await().atMost(Duration.ofMinutes(1)).until(() -> ChildJvm.tableExists(jdbc, "eec_effect_intent"));
			jdbc.sql("""
					INSERT INTO eec_effect_intent (effect_name, idempotency_key, payload, payload_fingerprint, receiver,
					    max_attempts)
					SELECT 'letter', 'letter-' || n, jsonb_build_array('letter-' || n), 'f', 'NOT_IDEMPOTENT', 3
					FROM generate_series(1, ?::int) AS n""").param(INTENTS).update();
			Random random = new Random(11);
			for (int round = 1; round <= KILLS; round++) {
				long before = received().size();
				await().atMost(Duration.ofMinutes(1)).until(() -> received().size() > before + 20);
				// the kill lands at a random moment of the work: chaos, not a wait for
				// anything
				Thread.sleep(100 + random.nextInt(400));
				this.running.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
				this.running = launch(database, round);
			}
			// the last drainer and its reconciler recover what the killed ones left in
			// flight
			await().atMost(Duration.ofMinutes(3))
				.until(() -> jdbc.sql("SELECT count(*) FROM eec_effect_intent WHERE status IN ('pending', 'in_flight')")
					.query(Long.class)
					.single() == 0);
			this.running.destroyForcibly().waitFor(30, TimeUnit.SECONDS);

			List<String> lines = received();
			Map<String, Integer> callsPerKey = new HashMap<>();
			lines.forEach((line) -> callsPerKey.merge(line.split(" ")[0], 1, Integer::sum));
			Set<String> completed = keys(jdbc, "completed");
			Set<String> parked = keys(jdbc, "needs_decision");
			System.out.println("Not-idempotent crash test: " + KILLS + " kills, " + lines.size() + " calls, "
					+ completed.size() + " completed, " + parked.size() + " parked");

			assertThat(callsPerKey).as("letters that reached the receiver more than once")
				.allSatisfy((key, calls) -> assertThat(calls).as(key).isOne());
			assertThat(completed.size() + parked.size()).isEqualTo(INTENTS);
			assertThat(callsPerKey.keySet()).containsAll(completed);
			// every attempt the receiver saw start and whose outcome was not recorded
			// waits for a decision
			Set<String> startedNotCompleted = new HashSet<>(callsPerKey.keySet());
			startedNotCompleted.removeAll(completed);
			assertThat(parked).containsAll(startedNotCompleted);
			// and a parked attempt the receiver never saw can only be one a kill caught
			// between its durable
			// started mark and the call: at most one per worker and kill, never a
			// claimed-but-unstarted one
			Set<String> parkedUnseen = new HashSet<>(parked);
			parkedUnseen.removeAll(callsPerKey.keySet());
			System.out.println(
					"Not-idempotent crash test: parked without a call (killed between mark and call): " + parkedUnseen);
			assertThat(parkedUnseen.size()).isLessThanOrEqualTo(KILLS * CONCURRENCY);
			assertThat(parkedUnseen).allSatisfy((key) -> assertThat(startedMark(jdbc, key)).as(key).isTrue());
		}
	}

	/** Never leave a drainer JVM behind, whatever the test's outcome. */
	@AfterEach
	void killTheDrainer() throws InterruptedException {
		if (this.running != null) {
			this.running.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
		}
	}

	private static List<String> received() throws Exception {
		if (!Files.exists(RECEIVER_LOG)) {
			return List.of();
		}
		return Files.readAllLines(RECEIVER_LOG, StandardCharsets.UTF_8)
			.stream()
			.filter((line) -> !line.isEmpty())
			.toList();
	}

	private static boolean startedMark(JdbcClient jdbc, String key) {
		return jdbc.sql("SELECT attempt_started_at IS NOT NULL FROM eec_effect_intent WHERE idempotency_key = ?")
			.param(key)
			.query(Boolean.class)
			.single();
	}

	private static Set<String> keys(JdbcClient jdbc, String status) {
		return new HashSet<>(jdbc.sql("SELECT idempotency_key FROM eec_effect_intent WHERE status = ?")
			.param(status)
			.query(String.class)
			.list());
	}

	private static Process launch(TestDatabase database, int run) throws Exception {
		return ChildJvm.start(CrashingMailerMain.class, "crash-mailer-" + run + ".log",
				ChildJvm.connection(database, RECEIVER_LOG.toAbsolutePath().toString()));
	}

}
