package io.ductor.reliability;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import com.rabbitmq.client.GetResponse;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.jdbc.core.simple.JdbcClient;

import org.awaitility.Awaitility;

import io.ductor.amqp.DurableRabbit;
import io.ductor.messaging.DuctorMessageHeaders;
import io.ductor.reliability.depot.DepotApplication;
import io.ductor.reliability.dispatch.DispatchApplication;
import io.ductor.test.ChildJvm;
import io.ductor.test.PostgresExtension;
import io.ductor.test.RabbitBroker;
import io.ductor.test.TestDatabase;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The RabbitMQ crash: Ductor's RabbitMQ outbox and inbox between two applications in JVMs
 * of their own, on one database and the machine's RabbitMQ server (behind a TCP proxy in
 * the test JVM; the server itself is shared and never restarted). The producing
 * application ({@link DispatchApplication}) inserts a row and publishes a message in each
 * transaction, some of which roll back after the send; the routing key is the ordering
 * key, and per routing key the messages carry a sequence number in commit order. The
 * consuming application ({@link DepotApplication}) applies them from one queue, one
 * consumer, one unacknowledged message at a time, with {@code @IdempotentListener}. Both
 * are killed with SIGKILL and restarted (the producer also while the broker's confirms
 * are swallowed, its intents in flight), and the broker connections are dropped, refused
 * for a while, and muted (messages routed, the confirms swallowed) mid-stream. Judged at
 * the end, in SQL, in the consumer's delivery log and from an audit queue bound beside
 * the consumer's (a copy of every message the broker routed): every committed row's
 * message applied exactly once, no message for a rolled-back transaction, copies at the
 * broker only with the same idempotency key, and per routing key the messages applied in
 * commit order.
 */
class RabbitOutboxCrashTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	private static final JsonMapper mapper = JsonMapper.builder().build();

	/** The kinds of fault, each one event of the attack. */
	enum Fault {

		/** SIGKILL of the producing application, restarted at once. */
		KILL_PRODUCER,
		/**
		 * SIGKILL of the producing application 1 s into a mute of the broker's frames:
		 * messages routed, their confirms never heard, their intents in flight; restarted
		 * with the broker answering again.
		 */
		KILL_PRODUCER_MUTED,
		/** SIGKILL of the consuming application while it applies messages, restarted. */
		KILL_CONSUMER,
		/** Every connection to the broker closed; reconnecting is allowed at once. */
		DROP,
		/** Every connection closed and new ones refused for 1.5 s. */
		REFUSE,
		/**
		 * The broker's frames swallowed for 4 s (longer than the relay's confirm
		 * timeout): messages are routed, their confirms lost.
		 */
		MUTE

	}

	/** The size of the attack in the short and the long profile. */
	record Attack(int producerKills, int mutedProducerKills, int consumerKills, int drops, int refusals, int mutes,
			int producerThreads, int keys, int pauseMillis, int parcelsBetweenFaults) {

		static Attack current() {
			return "chaos".equals(Scale.current().name()) ? new Attack(7, 3, 4, 6, 3, 4, 4, 16, 40, 100)
					: new Attack(1, 1, 1, 1, 1, 1, 4, 16, 40, 20);
		}

		List<Fault> faults(Random random) {
			List<Fault> faults = new ArrayList<>();
			faults.addAll(Collections.nCopies(this.producerKills, Fault.KILL_PRODUCER));
			faults.addAll(Collections.nCopies(this.mutedProducerKills, Fault.KILL_PRODUCER_MUTED));
			faults.addAll(Collections.nCopies(this.consumerKills, Fault.KILL_CONSUMER));
			faults.addAll(Collections.nCopies(this.drops, Fault.DROP));
			faults.addAll(Collections.nCopies(this.refusals, Fault.REFUSE));
			faults.addAll(Collections.nCopies(this.mutes, Fault.MUTE));
			Collections.shuffle(faults, random);
			return faults;
		}

	}

	@Test
	void killedProducersAndConsumersAndDroppedConnectionsLoseNoMessageApplyNoneTwiceAndKeepEachKeysOrder()
			throws Exception {
		RabbitBroker.assumeAvailable();
		Attack attack = Attack.current();
		TestDatabase database = postgres.database();
		JdbcClient jdbc = JdbcClient.create(postgres.dataSource());
		Path directory = Report.directory("rabbit-crash");
		Path stopFile = directory.resolve("stop");
		Path rolledBackLog = directory.resolve("rolled-back.log");
		Path deliveryLog = directory.resolve("deliveries.log");
		Random random = new Random(20261205L);
		List<Fault> faults = attack.faults(random);
		List<Duration> restarts = new ArrayList<>();
		List<Long> backlogAtKill = new ArrayList<>();
		List<Long> inFlightAtKill = new ArrayList<>();
		long start = System.nanoTime();
		try (RabbitCrashBroker broker = new RabbitCrashBroker()) {
			Launcher launcher = new Launcher(directory, database, broker, stopFile, rolledBackLog, deliveryLog, attack);
			Process consumer = launcher.consumer(0);
			Process producer = null;
			try {
				awaitUntil("the depot application's tables", consumer, directory.resolve("c0.log"),
						() -> tableExists(jdbc, "parcel_applied"));
				producer = launcher.producer(0);
				awaitUntil("the first parcel", producer, directory.resolve("p0.log"), () -> parcels(jdbc, "p0-%") > 0);
				int producerGeneration = 0;
				int consumerGeneration = 0;
				for (Fault fault : faults) {
					long before = parcels(jdbc, "%");
					Process running = producer;
					int generation = producerGeneration;
					awaitUntil("parcels before the next fault", running, directory.resolve("p" + generation + ".log"),
							() -> parcels(jdbc, "%") >= before + attack.parcelsBetweenFaults());
					// not a wait: a random moment for the fault
					Thread.sleep(300 + random.nextInt(900));
					switch (fault) {
						case KILL_PRODUCER, KILL_PRODUCER_MUTED -> {
							if (fault == Fault.KILL_PRODUCER_MUTED) {
								broker.muteAnswers();
								// not a wait: the producer is killed while answers are
								// muted
								Thread.sleep(1000);
							}
							backlogAtKill.add(backlog(jdbc));
							inFlightAtKill.add(inFlight(jdbc));
							producer.destroyForcibly();
							assertThat(producer.waitFor(30, TimeUnit.SECONDS)).isTrue();
							if (fault == Fault.KILL_PRODUCER_MUTED) {
								broker.answer();
							}
							producerGeneration++;
							long launched = System.nanoTime();
							producer = launcher.producer(producerGeneration);
							String prefix = "p" + producerGeneration;
							awaitUntil("the first parcel of " + prefix, producer, directory.resolve(prefix + ".log"),
									() -> parcels(jdbc, prefix + "-%") > 0);
							restarts.add(Duration.ofNanos(System.nanoTime() - launched));
						}
						case KILL_CONSUMER -> {
							Process killed = consumer;
							awaitUntil("the consumer applying messages", killed,
									directory.resolve("c" + consumerGeneration + ".log"),
									() -> jdbc
										.sql("SELECT count(*) FROM parcel_applied "
												+ "WHERE applied_at > clock_timestamp() - interval '1 second'")
										.query(Long.class)
										.single() >= 5);
							consumer.destroyForcibly();
							assertThat(consumer.waitFor(30, TimeUnit.SECONDS)).isTrue();
							consumerGeneration++;
							consumer = launcher.consumer(consumerGeneration);
						}
						case DROP -> broker.drop();
						case REFUSE -> {
							broker.refuse();
							// not a wait: how long the broker refuses connections
							Thread.sleep(1500);
							broker.reconnect();
						}
						case MUTE -> {
							broker.muteAnswers();
							// not a wait: how long the broker stays mute
							Thread.sleep(4000);
							broker.answer();
						}
					}
				}
				Files.createFile(stopFile);
				// a transaction that began before the stop file appeared commits, then
				// the
				// relay and the consumer catch up
				Thread.sleep(1000);
				long settleStart = System.nanoTime();
				Process last = consumer;
				awaitUntil("the relay and the consumer to catch up", last,
						directory.resolve("c" + consumerGeneration + ".log"),
						() -> backlog(jdbc) == 0 && jdbc.sql("SELECT count(DISTINCT id) FROM parcel_applied")
							.query(Long.class)
							.single() >= parcels(jdbc, "%") && ready(broker) == 0);
				Duration settle = Duration.ofNanos(System.nanoTime() - settleStart);
				Map<String, Object> figures = judge(jdbc, broker, rolledBackLog, deliveryLog);
				new Report("RabbitMQ crash, outbox and inbox under kill -9 and dropped connections")
					.parameter("faults, in order", faults)
					.parameter("producer threads; routing keys", attack.producerThreads() + "; " + attack.keys())
					.parameter("topology",
							"a topic exchange; the consumer's queue and an audit queue, both bound with #; "
									+ "the consumer: one listener thread, prefetch 1, automatic acknowledgement")
					.parameter("dispatch.yml", "confirm timeout 2s, lease 3s, reconciler 500ms, backoff 200ms to 2s")
					.parameter("producer pause between transactions", attack.pauseMillis() + " ms")
					.parameter("time between faults",
							attack.parcelsBetweenFaults() + " new parcels, then 300 to 1200 ms, random (seed 20261205)")
					.figure("intents pending or in flight at each producer kill", backlogAtKill)
					.figure("of which in flight", inFlightAtKill)
					.figure("producer restart to its first parcel (JVM start)", Report.spread(restarts))
					.figure("settle after the last fault", Report.millis(settle))
					.figure("whole attack", Report.millis(Duration.ofNanos(System.nanoTime() - start)))
					.figures(figures)
					.write();
				for (String mustBeZero : List.of("relay intents not completed", "messages without the header",
						"idempotency keys on messages of two parcels", "parcels sent under two idempotency keys",
						"messages at the broker for no committed parcel", "rolled-back parcels at the broker",
						"committed parcels never at the broker", "messages whose routing key is not their parcel's key",
						"committed parcels not applied", "parcels applied twice",
						"applied messages for no committed parcel", "applied seq differs from the parcel's",
						"keys applied out of commit order")) {
					assertThat(figures.get(mustBeZero)).as(mustBeZero).isEqualTo(0L);
				}
				assertThat((Long) figures.get("committed parcels")).isPositive();
				assertThat((Long) figures.get("rolled back on purpose")).isPositive();
			}
			finally {
				for (Process process : new Process[] { producer, consumer }) {
					if (process != null && process.isAlive()) {
						process.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
					}
				}
			}
		}
	}

	static Map<String, Object> judge(JdbcClient jdbc, RabbitCrashBroker broker, Path rolledBackLog, Path deliveryLog)
			throws IOException {
		Map<String, Integer> committed = new HashMap<>();
		Map<String, String> keyOf = new HashMap<>();
		jdbc.sql("SELECT id, key, seq FROM parcel").query((rs) -> {
			committed.put(rs.getString("id"), rs.getInt("seq"));
			keyOf.put(rs.getString("id"), rs.getString("key"));
		});
		Set<String> rolledBack = new HashSet<>(lines(rolledBackLog));
		Map<String, Object> figures = new LinkedHashMap<>();
		figures.put("committed parcels", (long) committed.size());
		figures.put("rolled back on purpose", (long) rolledBack.size());
		figures.put("relay intents not completed",
				jdbc.sql("SELECT count(*) FROM eec_effect_intent WHERE effect_name = ? AND status <> 'completed'")
					.param(DurableRabbit.EFFECT)
					.query(Long.class)
					.single());
		figures.put("relay attempts beyond the first",
				jdbc.sql("SELECT COALESCE(sum(attempts - 1), 0) FROM eec_effect_intent WHERE effect_name = ?")
					.param(DurableRabbit.EFFECT)
					.query(Long.class)
					.single());

		// every message the broker routed: the audit queue
		List<GetResponse> messages = broker.drainAudit();
		Map<String, String> parcelOfKey = new HashMap<>();
		Map<String, String> keyOfParcel = new HashMap<>();
		long withoutHeader = 0;
		long keyOnTwoParcels = 0;
		long parcelUnderTwoKeys = 0;
		long uncommitted = 0;
		long rolledBackSent = 0;
		long wrongRoutingKey = 0;
		for (GetResponse message : messages) {
			Map<String, Object> headers = message.getProps().getHeaders();
			Object header = (headers != null) ? headers.get(DuctorMessageHeaders.IDEMPOTENCY_KEY) : null;
			JsonNode value = mapper.readTree(new String(message.getBody(), StandardCharsets.UTF_8));
			String id = value.get("id").asString();
			if (header == null) {
				withoutHeader++;
				continue;
			}
			String idempotencyKey = header.toString();
			String known = parcelOfKey.putIfAbsent(idempotencyKey, id);
			if (known != null && !known.equals(id)) {
				keyOnTwoParcels++;
			}
			String knownKey = keyOfParcel.putIfAbsent(id, idempotencyKey);
			if (knownKey != null && !knownKey.equals(idempotencyKey)) {
				parcelUnderTwoKeys++;
			}
			if (!committed.containsKey(id)) {
				uncommitted++;
			}
			if (rolledBack.contains(id)) {
				rolledBackSent++;
			}
			if (!message.getEnvelope().getRoutingKey().equals(value.get("key").asString())) {
				wrongRoutingKey++;
			}
		}
		figures.put("messages at the broker", (long) messages.size());
		figures.put("duplicates at the broker (copies with the same idempotency key)",
				(long) messages.size() - withoutHeader - parcelOfKey.size());
		figures.put("messages without the header", withoutHeader);
		figures.put("idempotency keys on messages of two parcels", keyOnTwoParcels);
		figures.put("parcels sent under two idempotency keys", parcelUnderTwoKeys);
		figures.put("messages at the broker for no committed parcel", uncommitted);
		figures.put("rolled-back parcels at the broker", rolledBackSent);
		figures.put("committed parcels never at the broker",
				committed.keySet().stream().filter((id) -> !keyOfParcel.containsKey(id)).count());
		figures.put("messages whose routing key is not their parcel's key", wrongRoutingKey);

		// the consumer
		List<String> deliveries = lines(deliveryLog);
		figures.put("deliveries to the listener", (long) deliveries.size());
		// a line: <idempotency key> <redelivered> <delivery tag> <consumer generation>
		figures.put("deliveries flagged redelivered by the broker (sent back by a lost connection or a kill)",
				deliveries.stream().filter((line) -> line.split(" ")[1].equals("true")).count());
		figures.put("deliveries the inbox skipped (its key applied before)",
				deliveries.size() - deliveries.stream().map((line) -> line.split(" ")[0]).distinct().count());
		Map<String, Integer> appliedPerParcel = new HashMap<>();
		Map<String, Integer> appliedPerIdempotencyKey = new HashMap<>();
		Map<String, List<Integer>> appliedSeqs = new HashMap<>();
		long seqMismatch = 0;
		List<Map<String, Object>> applied = jdbc
			.sql("SELECT idempotency_key, id, key, seq FROM parcel_applied ORDER BY applied_order")
			.query()
			.listOfRows();
		for (Map<String, Object> row : applied) {
			String id = (String) row.get("id");
			appliedPerParcel.merge(id, 1, Integer::sum);
			appliedPerIdempotencyKey.merge(String.valueOf(row.get("idempotency_key")), 1, Integer::sum);
			appliedSeqs.computeIfAbsent((String) row.get("key"), (k) -> new ArrayList<>())
				.add((Integer) row.get("seq"));
			Integer seq = committed.get(id);
			if (seq != null && (!seq.equals(row.get("seq")) || !keyOf.get(id).equals(row.get("key")))) {
				seqMismatch++;
			}
		}
		figures.put("messages applied", (long) applied.size());
		figures.put("consumer generations that applied messages",
				jdbc.sql("SELECT count(DISTINCT consumer) FROM parcel_applied").query(Long.class).single());
		figures.put("committed parcels not applied",
				committed.keySet().stream().filter((id) -> !appliedPerParcel.containsKey(id)).count());
		figures.put("parcels applied twice", appliedPerParcel.values().stream().filter((n) -> n > 1).count()
				+ appliedPerIdempotencyKey.values().stream().filter((n) -> n > 1).count());
		figures.put("applied messages for no committed parcel",
				appliedPerParcel.keySet().stream().filter((id) -> !committed.containsKey(id)).count());
		figures.put("applied seq differs from the parcel's", seqMismatch);
		long outOfOrder = 0;
		for (List<Integer> seqs : appliedSeqs.values()) {
			for (int i = 1; i < seqs.size(); i++) {
				if (seqs.get(i) <= seqs.get(i - 1)) {
					outOfOrder++;
					break;
				}
			}
		}
		figures.put("keys applied out of commit order", outOfOrder);
		figures.put("inbox records (completed)", jdbc.sql(
				"SELECT count(*) FROM eec_routing_idempotency WHERE pool_id = 'inbox:Depot.onParcel' AND status = 'completed'")
			.query(Long.class)
			.single());
		return figures;
	}

	/** Launches the two applications, each generation with a log of its own. */
	record Launcher(Path directory, TestDatabase database, RabbitCrashBroker broker, Path stopFile, Path rolledBackLog,
			Path deliveryLog, Attack attack) {

		Process producer(int generation) throws IOException {
			List<String> args = ChildJvm.arguments(this.database.springProperties());
			args.addAll(ChildJvm.arguments(this.broker.springProperties().toArray(String[]::new)));
			args.addAll(List.of("--dispatch.exchange=" + this.broker.exchange, "--dispatch.generation=p" + generation,
					"--dispatch.threads=" + this.attack.producerThreads(), "--dispatch.keys=" + this.attack.keys(),
					"--dispatch.pause-millis=" + this.attack.pauseMillis(), "--dispatch.stop-file=" + this.stopFile,
					"--dispatch.rolled-back-log=" + this.rolledBackLog));
			return ChildJvm.start(DispatchApplication.class, this.directory.resolve("p" + generation + ".log"),
					List.of("-Xmx192m", "-Xss512k"), args);
		}

		Process consumer(int generation) throws IOException {
			List<String> args = ChildJvm.arguments(this.database.springProperties());
			args.addAll(ChildJvm.arguments(this.broker.springProperties().toArray(String[]::new)));
			args.addAll(List.of("--depot.queue=" + this.broker.queue, "--depot.generation=c" + generation,
					"--depot.delivery-log=" + this.deliveryLog));
			return ChildJvm.start(DepotApplication.class, this.directory.resolve("c" + generation + ".log"),
					List.of("-Xmx192m", "-Xss512k"), args);
		}

	}

	/** The relay's backlog: its intents pending or in flight. */
	private static long backlog(JdbcClient jdbc) {
		return jdbc
			.sql("SELECT count(*) FROM eec_effect_intent WHERE effect_name = ? AND status IN ('pending', 'in_flight')")
			.param(DurableRabbit.EFFECT)
			.query(Long.class)
			.single();
	}

	/** The relay's intents in flight: claimed, their attempt not recorded. */
	private static long inFlight(JdbcClient jdbc) {
		return jdbc.sql("SELECT count(*) FROM eec_effect_intent WHERE effect_name = ? AND status = 'in_flight'")
			.param(DurableRabbit.EFFECT)
			.query(Long.class)
			.single();
	}

	private static long ready(RabbitCrashBroker broker) {
		try {
			return broker.ready(broker.queue);
		}
		catch (IOException ex) {
			throw new IllegalStateException(ex);
		}
	}

	private static long parcels(JdbcClient jdbc, String idPattern) {
		if (!tableExists(jdbc, "parcel")) {
			return 0;
		}
		return jdbc.sql("SELECT count(*) FROM parcel WHERE id LIKE ?").param(idPattern).query(Long.class).single();
	}

	private static boolean tableExists(JdbcClient jdbc, String table) {
		return jdbc.sql("SELECT to_regclass(?) IS NOT NULL").param(table).query(Boolean.class).single();
	}

	/** Waits up to 120 s for {@code condition}, failing early if {@code process} died. */
	private static void awaitUntil(String what, Process process, Path log, BooleanSupplier condition) throws Exception {
		Awaitility.await(what).atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofMillis(100)).until(() -> {
			if (condition.getAsBoolean()) {
				return true;
			}
			if (!process.isAlive()) {
				throw new IllegalStateException("Died while waiting for " + what + ":\n" + Files.readString(log));
			}
			return false;
		});
	}

	private static List<String> lines(Path log) throws IOException {
		return Files.exists(log) ? Files.readAllLines(log).stream().filter((line) -> !line.isBlank()).toList()
				: List.of();
	}

}
