package io.ductor.reliability;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.jdbc.core.simple.JdbcClient;

import org.awaitility.Awaitility;
import org.awaitility.core.ConditionTimeoutException;
import io.ductor.reliability.meet.MeetApplication;
import io.ductor.test.ChildJvm;
import io.ductor.test.PostgresExtension;
import io.ductor.test.TestDatabase;
import io.ductor.test.TestDatabases;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Where the effect features meet, attacked from outside: two instances of
 * {@link MeetApplication} (JVMs of their own, dispatch at commit on) on one database,
 * clients that send every order three times at once to either instance and retry it on
 * any error, some orders holding their transaction open past the drainer's lease, some
 * rolled back after recording their effects; one instance killed with {@code kill -9}
 * while the limited effect's backlog drains, and every connection of both terminated with
 * {@code pg_terminate_backend} a few times. Judged in SQL and in the receivers' own log:
 * no receiver call for an order that never committed, every committed intent completed,
 * failed or parked (none pending or in flight), no {@code NOT_IDEMPOTENT} receiver called
 * twice, none parked that never started, and never more than two calls of the limited
 * effect at once (a call in a killed JVM ends at its kill).
 */
@Tag("long")
class EffectsWhereFeaturesMeetTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	static final String APPLICATION_NAME_PREFIX = "meet-app-";

	/** The size of the attack in the short and the long profile. */
	record Attack(int orders, int rolledBack, int kills, int terminations, int clients) {

		static Attack current() {
			return "chaos".equals(Scale.current().name()) ? new Attack(1500, 150, 6, 8, 16)
					: new Attack(400, 40, 2, 3, 12);
		}

	}

	@Test
	void twoInstancesKilledAndCutOffKeepEveryEffectPromise() throws Exception {
		Attack attack = Attack.current();
		TestDatabase database = postgres.database();
		Path directory = Report.directory("effects-where-features-meet");
		Path callLog = directory.resolve("calls.log");
		Files.deleteIfExists(callLog);
		Random random = new Random(20261206L);
		int[] ports = { Workload.freePort(), Workload.freePort() };
		Process[] instances = new Process[2];
		Map<Long, Long> killedAtMicros = new ConcurrentHashMap<>();
		JdbcClient jdbc = JdbcClient.create(postgres.dataSource());
		List<Duration> restarts = new ArrayList<>();
		int terminated = 0;
		List<Long> limitedBacklogAtKill = new ArrayList<>();
		ExecutorService clients = Executors.newFixedThreadPool(attack.clients());
		long start = System.nanoTime();
		try {
			// one after the other: the first creates the tables
			for (int i = 0; i < 2; i++) {
				instances[i] = launch(directory, database, name(i, 0), ports[i], callLog);
				restarts.add(awaitReady(instances[i], ports[i], directory.resolve(name(i, 0) + ".log")));
			}
			// the orders, three copies each at once, and the rolled-back ones, shuffled
			List<Request> requests = new ArrayList<>();
			for (int n = 0; n < attack.orders(); n++) {
				long hold = (random.nextInt(100) < 6) ? 2500 + random.nextInt(1000) : 0;
				for (int copy = 0; copy < 3; copy++) {
					requests.add(new Request("k-" + n, hold, false));
				}
			}
			for (int n = 0; n < attack.rolledBack(); n++) {
				long hold = (random.nextInt(100) < 20) ? 2500 + random.nextInt(1000) : 0;
				requests.add(new Request("rb-" + n, hold, true));
			}
			Collections.shuffle(requests, random);
			Map<String, Integer> outcomes = new ConcurrentHashMap<>();
			AtomicInteger retries = new AtomicInteger();
			List<CompletableFuture<Void>> sent = new ArrayList<>();
			for (Request request : requests) {
				sent.add(CompletableFuture.runAsync(() -> send(request, ports, outcomes, retries), clients));
			}
			// the faults, while the limited effect's backlog drains
			int kills = 0;
			int terminations = 0;
			int generation = 1;
			while (kills < attack.kills() || terminations < attack.terminations()) {
				// not a wait: a random moment for the next kill or termination
				Thread.sleep(1500 + random.nextInt(2000));
				boolean kill = kills < attack.kills()
						&& (terminations >= attack.terminations() || random.nextBoolean());
				if (kill) {
					int victim = random.nextInt(2);
					limitedBacklogAtKill.add(jdbc.sql("""
							SELECT count(*) FROM eec_effect_intent
							WHERE effect_name = 'meet.limited' AND status IN ('pending', 'in_flight')""")
						.query(Long.class)
						.single());
					long pid = instances[victim].pid();
					killedAtMicros.put(pid, nowMicros());
					instances[victim].destroyForcibly();
					assertThat(instances[victim].waitFor(30, TimeUnit.SECONDS)).isTrue();
					killedAtMicros.put(pid, nowMicros());
					instances[victim] = launch(directory, database, name(victim, generation), ports[victim], callLog);
					restarts.add(awaitReady(instances[victim], ports[victim],
							directory.resolve(name(victim, generation) + ".log")));
					generation++;
					kills++;
				}
				else {
					terminated += TestDatabases.terminateConnections(database, APPLICATION_NAME_PREFIX + "%");
					terminations++;
				}
			}
			CompletableFuture.allOf(sent.toArray(CompletableFuture[]::new)).get(300, TimeUnit.SECONDS);
			long settleStart = System.nanoTime();
			try {
				Awaitility.await()
					.atMost(Duration.ofSeconds(120))
					.pollDelay(Duration.ZERO)
					.pollInterval(Duration.ofMillis(250))
					.until(() -> jdbc
						.sql("SELECT count(*) FROM eec_effect_intent WHERE status IN ('pending', 'in_flight')")
						.query(Long.class)
						.single() == 0);
			}
			catch (ConditionTimeoutException ex) {
				// judged below: what did not settle shows in the figures
			}
			Duration settle = Duration.ofNanos(System.nanoTime() - settleStart);
			Map<String, Object> figures = judge(jdbc, callLog, killedAtMicros, attack);
			new Report("Effects where features meet: two instances, kill -9, connections terminated")
				.parameter("orders (three copies each, at once, either instance)", attack.orders())
				.parameter("orders rolled back after recording", attack.rolledBack())
				.parameter("orders holding their transaction open 2.5 to 3.5 s (lease 2 s)",
						"about 6 % of orders, 20 % of rolled-back ones")
				.parameter("kills (SIGKILL, either instance)", attack.kills())
				.parameter("rounds of pg_terminate_backend of both instances' connections", attack.terminations())
				.parameter("clients", attack.clients())
				.parameter("meet.yml", "lease 2 s, poll 250 ms, reconciler 500 ms; limited effect 40 to 120 ms a call")
				.figure("client retries (errors, 5xx)", retries.get())
				.figure("answers", outcomes)
				.figure("limited intents pending or in flight at each kill", limitedBacklogAtKill)
				.figure("connections terminated", terminated)
				.figure("restart to ready (JVM start)", Report.spread(restarts))
				.figure("settle after the storm", Report.millis(settle))
				.figure("whole attack", Report.millis(Duration.ofNanos(System.nanoTime() - start)))
				.figures(figures)
				.write();
			assertThat((Long) figures.get("most calls of the limited effect at once"))
				.as("most calls of the effect limited to 2 at once (RELIABILITY.md)")
				.isLessThanOrEqualTo(2L);
			for (String mustBeZero : List.of("receiver calls for orders that never committed",
					"committed orders without their three intents", "intents pending or in flight after settling",
					"NOT_IDEMPOTENT receiver called twice for one key", "parked intents that never started",
					"completed NOT_IDEMPOTENT intents never called", "completed deduplicated intents never applied",
					"limited calls without an end in a live JVM", "intents failed")) {
				assertThat(figures.get(mustBeZero)).as(mustBeZero).isEqualTo(0L);
			}
		}
		finally {
			clients.shutdownNow();
			for (Process instance : instances) {
				if (instance != null && instance.isAlive()) {
					instance.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
				}
			}
		}
	}

	record Request(String key, long hold, boolean rollBack) {
	}

	/**
	 * Sends one copy of an order to either instance until it gets an answer that is not
	 * an error: {@code 201} or {@code 200}, or {@code 422} for an order rolled back on
	 * purpose.
	 */
	private static void send(Request request, int[] ports, Map<String, Integer> outcomes, AtomicInteger retries) {
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(240);
		while (System.nanoTime() < deadline && !Thread.currentThread().isInterrupted()) {
			int port = ports[ThreadLocalRandom.current().nextInt(2)];
			URI uri = URI.create("http://127.0.0.1:" + port + "/orders?key=" + request.key() + "&hold=" + request.hold()
					+ "&rollback=" + request.rollBack());
			try {
				HttpResponse<String> response = Workload.HTTP.send(HttpRequest.newBuilder(uri)
					.timeout(Duration.ofSeconds(15))
					.POST(HttpRequest.BodyPublishers.noBody())
					.build(), HttpResponse.BodyHandlers.ofString());
				int status = response.statusCode();
				if (status == 200 || status == 201 || (status == 422 && request.rollBack())) {
					outcomes.merge(String.valueOf(status), 1, Integer::sum);
					return;
				}
			}
			catch (IOException ex) {
				// killed, restarting or cut off: the same request again
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				return;
			}
			retries.incrementAndGet();
			try {
				// not a wait: the client's pause before it retries
				Thread.sleep(100);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				return;
			}
		}
		outcomes.merge("gave up", 1, Integer::sum);
	}

	static Map<String, Object> judge(JdbcClient jdbc, Path callLog, Map<Long, Long> killedAtMicros, Attack attack)
			throws IOException {
		Set<String> committed = new HashSet<>(jdbc.sql("SELECT order_key FROM meet_order").query(String.class).list());
		Map<String, Integer> onceCalls = new HashMap<>();
		Map<String, long[]> limitedCalls = new LinkedHashMap<>();
		long calls = 0;
		long uncommittedCalls = 0;
		for (String line : Files.readAllLines(callLog)) {
			if (line.isBlank()) {
				continue;
			}
			String[] parts = line.split(" ");
			String what = parts[0];
			String effectKey = parts[1];
			String order = effectKey.substring(effectKey.indexOf(':') + 1);
			long pid = Long.parseLong(parts[3]);
			long micros = Long.parseLong(parts[4]);
			if (!what.equals("E")) {
				calls++;
				uncommittedCalls += committed.contains(order) ? 0 : 1;
			}
			switch (what) {
				case "N" -> onceCalls.merge(effectKey, 1, Integer::sum);
				case "S" -> limitedCalls.put(effectKey + " " + parts[2] + " " + pid, new long[] { pid, micros, -1 });
				case "E" -> {
					long[] call = limitedCalls.get(effectKey + " " + parts[2] + " " + pid);
					if (call != null) {
						call[2] = micros;
					}
				}
				default -> {
				}
			}
		}
		// the most calls of the limited effect at once: a call in a killed JVM ends at
		// the kill
		List<long[]> events = new ArrayList<>();
		long endless = 0;
		for (long[] call : limitedCalls.values()) {
			long end = call[2];
			if (end < 0) {
				Long killed = killedAtMicros.get(call[0]);
				if (killed == null) {
					endless++;
					continue;
				}
				end = killed;
			}
			events.add(new long[] { call[1], 1 });
			events.add(new long[] { end, -1 });
		}
		// at the same instant an end comes before a start
		events.sort((a, b) -> (a[0] != b[0]) ? Long.compare(a[0], b[0]) : Long.compare(a[1], b[1]));
		long atOnce = 0;
		long most = 0;
		for (long[] event : events) {
			atOnce += event[1];
			most = Math.max(most, atOnce);
		}
		Map<String, Object> figures = new LinkedHashMap<>();
		figures.put("orders committed", (long) committed.size());
		figures.put("receiver calls", calls);
		figures.put("calls of the limited effect", (long) limitedCalls.size());
		figures.put("most calls of the limited effect at once", most);
		figures.put("limited calls without an end in a live JVM", endless);
		figures.put("receiver calls for orders that never committed", uncommittedCalls);
		figures.put("NOT_IDEMPOTENT receiver called twice for one key",
				onceCalls.values().stream().filter((n) -> n > 1).count());
		figures.put("intents by effect and status", jdbc
			.sql("SELECT effect_name || ' ' || status AS k, count(*) AS n FROM eec_effect_intent "
					+ "GROUP BY 1 ORDER BY 1")
			.query((rs, n) -> rs.getString(1) + ": " + rs.getLong(2))
			.list());
		figures.put("committed orders without their three intents",
				jdbc.sql("""
						SELECT count(*) FROM meet_order o
						WHERE (SELECT count(*) FROM eec_effect_intent i WHERE i.idempotency_key IN
						       ('lim:' || o.order_key, 'unl:' || o.order_key, 'once:' || o.order_key)) <> 3""")
					.query(Long.class)
					.single());
		figures.put("intents pending or in flight after settling",
				jdbc.sql("SELECT count(*) FROM eec_effect_intent WHERE status IN ('pending', 'in_flight')")
					.query(Long.class)
					.single());
		figures.put("intents failed",
				jdbc.sql("SELECT count(*) FROM eec_effect_intent WHERE status IN ('failed', 'cancelled')")
					.query(Long.class)
					.single());
		figures.put("parked intents (needs_decision)",
				jdbc.sql("SELECT count(*) FROM eec_effect_intent WHERE status = 'needs_decision'")
					.query(Long.class)
					.single());
		figures.put("parked intents that never started", jdbc.sql(
				"SELECT count(*) FROM eec_effect_intent WHERE status = 'needs_decision' AND attempt_started_at IS NULL")
			.query(Long.class)
			.single());
		List<String> onceCompleted = jdbc.sql(
				"SELECT idempotency_key FROM eec_effect_intent WHERE effect_name = 'meet.once' AND status = 'completed'")
			.query(String.class)
			.list();
		figures.put("completed NOT_IDEMPOTENT intents never called",
				onceCompleted.stream().filter((key) -> !onceCalls.containsKey(key)).count());
		figures.put("completed deduplicated intents never applied",
				jdbc.sql("""
						SELECT count(*) FROM eec_effect_intent i
						WHERE i.effect_name = 'meet.unlimited' AND i.status = 'completed'
						  AND NOT EXISTS (SELECT 1 FROM meet_applied a WHERE a.effect_key = i.idempotency_key)""")
					.query(Long.class)
					.single());
		figures.put("duplicate calls the deduplicating receiver collapsed",
				jdbc.sql("SELECT COALESCE(sum(calls - 1), 0) FROM meet_applied").query(Long.class).single());
		figures.put("attempts beyond the first",
				jdbc.sql("SELECT COALESCE(sum(attempts - 1), 0) FROM eec_effect_intent WHERE attempts > 1")
					.query(Long.class)
					.single());
		return figures;
	}

	private static String name(int instance, int generation) {
		return ((instance == 0) ? "a" : "b") + "-g" + generation;
	}

	private static long nowMicros() {
		return ChronoUnit.MICROS.between(Instant.EPOCH, Instant.now());
	}

	private static Process launch(Path directory, TestDatabase database, String name, int port, Path callLog)
			throws IOException {
		List<String> args = ChildJvm.arguments(database.springProperties());
		args.addAll(List.of("--server.port=" + port, "--meet.call-log=" + callLog, "--meet.instance=" + name,
				"--spring.datasource.hikari.data-source-properties.ApplicationName=" + APPLICATION_NAME_PREFIX + name));
		return ChildJvm.start(MeetApplication.class, directory.resolve(name + ".log"), List.of("-Xmx192m", "-Xss512k"),
				args);
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
								"the application died during start-up:\n" + Files.readString(log));
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
			throw new IllegalStateException("the application was not ready after 90 s");
		}
	}

}
