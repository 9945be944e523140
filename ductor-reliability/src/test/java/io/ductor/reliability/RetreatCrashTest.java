package io.ductor.reliability;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.jdbc.core.simple.JdbcClient;

import org.awaitility.Awaitility;
import org.awaitility.core.ConditionTimeoutException;
import io.ductor.reliability.retreat.RetreatApplication;
import io.ductor.test.ChildJvm;
import io.ductor.test.PostgresExtension;
import io.ductor.test.TestDatabase;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The retreat crash: an application written from the README ({@link RetreatApplication}:
 * a sign-up row, an {@code IDEMPOTENT} room hold and a {@code NOT_IDEMPOTENT} welcome
 * mail per guest) builds a backlog of mails under load (sign-ups come faster than its
 * slow mail server sends), and its JVM is killed with SIGKILL several times while
 * drainers hold claimed batches that never started. After a restart it settles. Judged in
 * SQL and in the mail server's own log (one line per call, written before the mail goes
 * out): no mail sent twice, no mail parked that never reached the mail server, every
 * parked mail seen once by it, no intent left in flight or pending, every guest one hold
 * at the hotel.
 */
class RetreatCrashTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	/** The size of the attack in the short and the long profile. */
	record Attack(int guests, int chunk, int kills, int pauseMinMillis, int pauseMaxMillis) {

		static Attack current() {
			return "chaos".equals(Scale.current().name()) ? new Attack(3900, 50, 12, 700, 1500)
					: new Attack(1000, 50, 3, 700, 1500);
		}

	}

	@Test
	void killedWhileAMailBacklogDrainsNoMailIsSentTwiceAndOnlyMailsThatStartedAreParked() throws Exception {
		Attack attack = Attack.current();
		TestDatabase database = postgres.database();
		Path directory = Report.directory("retreat-crash");
		Path mailLog = directory.resolve("mail-server.log");
		Random random = new Random(20261201L);
		int port = Workload.freePort();
		AtomicReference<Process> up = new AtomicReference<>();
		AtomicInteger signedUp = new AtomicInteger();
		AtomicInteger started = new AtomicInteger();
		List<Duration> restarts = new ArrayList<>();
		List<Long> backlogAtKill = new ArrayList<>();
		JdbcClient jdbc = JdbcClient.create(postgres.dataSource());
		long start = System.nanoTime();
		Process instance = launch(directory, database, "r-g0", port, mailLog);
		Thread loader = new Thread(() -> load(port, attack, signedUp, started), "retreat-loader");
		try {
			restarts.add(awaitReady(instance, port, directory.resolve("r-g0.log")));
			up.set(instance);
			loader.start();
			for (int kill = 1; kill <= attack.kills(); kill++) {
				Thread
					.sleep(attack.pauseMinMillis() + random.nextInt(attack.pauseMaxMillis() - attack.pauseMinMillis()));
				backlogAtKill
					.add(jdbc.sql("SELECT count(*) FROM eec_effect_intent WHERE status IN ('pending', 'in_flight')")
						.query(Long.class)
						.single());
				instance.destroyForcibly();
				assertThat(instance.waitFor(30, TimeUnit.SECONDS)).isTrue();
				instance = launch(directory, database, "r-g" + kill, port, mailLog);
				restarts.add(awaitReady(instance, port, directory.resolve("r-g" + kill + ".log")));
				started.incrementAndGet();
			}
			loader.join(TimeUnit.SECONDS.toMillis(120));
			assertThat(signedUp.get()).as("guests signed up").isEqualTo(attack.guests());
			long settleStart = System.nanoTime();
			try {
				Awaitility.await()
					.atMost(Duration.ofSeconds(60))
					.pollDelay(Duration.ZERO)
					.pollInterval(Duration.ofMillis(200))
					.until(() -> jdbc
						.sql("SELECT count(*) FROM eec_effect_intent WHERE status IN ('pending', 'in_flight')")
						.query(Long.class)
						.single() == 0);
			}
			catch (ConditionTimeoutException ex) {
				// judged below: what did not settle shows in the figures
			}
			Duration settle = Duration.ofNanos(System.nanoTime() - settleStart);
			Map<String, Object> figures = judge(jdbc, mailLog, attack);
			new Report("Retreat crash, kill -9 with a mail backlog").parameter("guests", attack.guests())
				.parameter("sign-ups per request", attack.chunk())
				.parameter("kills (SIGKILL)", attack.kills())
				.parameter("time between ready and kill",
						attack.pauseMinMillis() + " to " + attack.pauseMaxMillis() + " ms, random (seed 20261201)")
				.parameter("retreat.yml",
						"drainer batch 100, concurrency 8, lease 3s, reconciler 500ms; mail server 30 ms a call")
				.figure("intents pending or in flight at each kill", backlogAtKill)
				.figure("restart to ready (JVM start)", Report.spread(restarts))
				.figure("settle after the last kill", Report.millis(settle))
				.figure("whole attack", Report.millis(Duration.ofNanos(System.nanoTime() - start)))
				.figures(figures)
				.write();
			// the documented window: killed between the start mark's commit and the call,
			// one round trip per running worker
			assertThat((Long) figures
				.get("mails parked that never reached the mail server (killed between the start mark and the call)"))
				.isLessThanOrEqualTo(8L * attack.kills());
			for (String mustBeZero : List.of("mails sent twice", "mails parked that never started (no start mark)",
					"mails completed that the mail server never saw", "intents pending or in flight after settling",
					"intents in flight beyond their lease", "guests without exactly one hold",
					"guests without one hold intent and one mail intent", "mail or hold intents failed")) {
				assertThat(figures.get(mustBeZero)).as(mustBeZero).isEqualTo(0L);
			}
		}
		finally {
			loader.interrupt();
			if (instance.isAlive()) {
				instance.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
			}
		}
	}

	/**
	 * Signs every guest up, a chunk per request, retrying a chunk on any failure (it is
	 * idempotent): one slice of the guests after each start, as fast as the application
	 * takes them, so that every kill meets a backlog.
	 */
	private static void load(int port, Attack attack, AtomicInteger signedUp, AtomicInteger started) {
		int slice = attack.guests() / (attack.kills() + 1);
		for (int first = 0; first < attack.guests()
				&& !Thread.currentThread().isInterrupted(); first += attack.chunk()) {
			// the next chunk waits for the attack to have started enough kills; a plain
			// loop on this load thread, so that interrupting the thread stops it
			while (first / slice > started.get() && !Thread.currentThread().isInterrupted()) {
				sleep(20);
			}
			URI uri = URI.create("http://127.0.0.1:" + port + "/signups?first=" + first + "&count=" + attack.chunk());
			while (!Thread.currentThread().isInterrupted()) {
				try {
					HttpResponse<String> response = Workload.HTTP.send(HttpRequest.newBuilder(uri)
						.timeout(Duration.ofSeconds(10))
						.POST(HttpRequest.BodyPublishers.noBody())
						.build(), HttpResponse.BodyHandlers.ofString());
					if (response.statusCode() == 200) {
						break;
					}
				}
				catch (IOException ex) {
					// killed or not up yet: the same chunk again
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
					return;
				}
				sleep(100);
			}
			signedUp.addAndGet(attack.chunk());
		}
	}

	static Map<String, Object> judge(JdbcClient jdbc, Path mailLog, Attack attack) throws IOException {
		Map<String, Integer> callsPerMail = new HashMap<>();
		long calls = 0;
		for (String line : Files.readAllLines(mailLog)) {
			if (!line.isBlank()) {
				callsPerMail.merge(line.split(" ")[0], 1, Integer::sum);
				calls++;
			}
		}
		List<Map<String, Object>> mails = jdbc.sql("""
				SELECT idempotency_key, status, attempts, attempt_started_at IS NOT NULL AS marked
				FROM eec_effect_intent WHERE effect_name = 'retreat.welcome'""").query().listOfRows();
		long parked = 0;
		long parkedNeverSent = 0;
		long parkedUnmarked = 0;
		long completedNeverSent = 0;
		for (Map<String, Object> mail : mails) {
			String key = (String) mail.get("idempotency_key");
			int sent = callsPerMail.getOrDefault(key, 0);
			if ("needs_decision".equals(mail.get("status"))) {
				parked++;
				parkedNeverSent += (sent == 0) ? 1 : 0;
				parkedUnmarked += Boolean.TRUE.equals(mail.get("marked")) ? 0 : 1;
			}
			if ("completed".equals(mail.get("status"))) {
				completedNeverSent += (sent == 0) ? 1 : 0;
			}
		}
		Map<String, Object> figures = new LinkedHashMap<>();
		figures.put("guests signed up", jdbc.sql("SELECT count(*) FROM signup").query(Long.class).single());
		figures.put("calls at the mail server", calls);
		figures.put("mails parked (needs_decision): started when a kill came", parked);
		figures.put("mails sent twice", callsPerMail.values().stream().filter((n) -> n > 1).count());
		figures.put("mails parked that never started (no start mark)", parkedUnmarked);
		figures.put("mails parked that never reached the mail server (killed between the start mark and the call)",
				parkedNeverSent);
		figures.put("mails completed that the mail server never saw", completedNeverSent);
		figures.put("intents pending or in flight after settling",
				jdbc.sql("SELECT count(*) FROM eec_effect_intent WHERE status IN ('pending', 'in_flight')")
					.query(Long.class)
					.single());
		figures.put("intents in flight beyond their lease", jdbc
			.sql("SELECT count(*) FROM eec_effect_intent WHERE status = 'in_flight' AND lease_expires_at < now()")
			.query(Long.class)
			.single());
		figures.put("mail or hold intents failed",
				jdbc.sql("SELECT count(*) FROM eec_effect_intent WHERE status IN ('failed', 'cancelled')")
					.query(Long.class)
					.single());
		figures.put("guests without exactly one hold",
				jdbc.sql("""
						SELECT count(*) FROM signup s
						WHERE (SELECT count(*) FROM retreat_hold h WHERE h.hold_key = 'hold:' || s.guest) <> 1""")
					.query(Long.class)
					.single());
		figures.put("guests without one hold intent and one mail intent",
				jdbc.sql("""
						SELECT count(*) FROM signup s
						WHERE (SELECT count(*) FROM eec_effect_intent i
						       WHERE i.idempotency_key IN ('hold:' || s.guest, 'welcome:' || s.guest)) <> 2""")
					.query(Long.class)
					.single());
		figures.put("duplicate hold calls the hotel collapsed",
				jdbc.sql("SELECT COALESCE(sum(calls - 1), 0) FROM retreat_hold").query(Long.class).single());
		figures.put("hold attempts beyond the first (redriven after a kill)", jdbc
			.sql("SELECT COALESCE(sum(attempts - 1), 0) FROM eec_effect_intent WHERE effect_name = 'retreat.hold'")
			.query(Long.class)
			.single());
		return figures;
	}

	private static Process launch(Path directory, TestDatabase database, String name, int port, Path mailLog)
			throws IOException {
		List<String> args = ChildJvm.arguments(database.springProperties());
		args.addAll(List.of("--server.port=" + port, "--retreat.mail-log=" + mailLog));
		return ChildJvm.start(RetreatApplication.class, directory.resolve(name + ".log"),
				List.of("-Xmx160m", "-Xss512k"), args);
	}

	private static Duration awaitReady(Process process, int port, Path log) throws Exception {
		long start = System.nanoTime();
		try {
			Awaitility.await()
				.atMost(Duration.ofSeconds(90))
				.pollDelay(Duration.ZERO)
				.pollInterval(Duration.ofMillis(100))
				.until(() -> {
					if (!process.isAlive()) {
						throw new IllegalStateException(
								"the retreat application died during start-up:\n" + Files.readString(log));
					}
					try {
						HttpResponse<Void> response = Workload.HTTP
							.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/ready"))
								.timeout(Duration.ofSeconds(2))
								.build(), HttpResponse.BodyHandlers.discarding());
						if (response.statusCode() == 200) {
							return true;
						}
					}
					catch (IOException ex) {
						// not listening yet
					}
					return false;
				});
			return Duration.ofNanos(System.nanoTime() - start);
		}
		catch (ConditionTimeoutException ex) {
			throw new IllegalStateException("the retreat application was not ready after 90 s");
		}
	}

	// not a wait: the guests' pacing
	private static void sleep(long millis) {
		try {
			Thread.sleep(millis);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

}
