package io.ductor.reliability;

import java.io.IOException;
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

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.Header;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.jdbc.core.simple.JdbcClient;

import org.awaitility.Awaitility;

import io.ductor.kafka.DurableKafka;
import io.ductor.messaging.DuctorMessageHeaders;
import io.ductor.reliability.shipments.ShipmentsApplication;
import io.ductor.reliability.shipping.ShippingApplication;
import io.ductor.test.ChildJvm;
import io.ductor.test.PostgresExtension;
import io.ductor.test.TestDatabase;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The Kafka crash: Ductor's Kafka outbox and inbox between two applications in JVMs of
 * their own, on one database and the embedded KRaft broker of the test JVM (behind a TCP
 * proxy). The producing application ({@link ShipmentsApplication}) inserts a row and
 * sends a message in each transaction, some of which roll back after the send; per record
 * key the messages carry a sequence number in commit order. The consuming application
 * ({@link ShippingApplication}) applies them with {@code @IdempotentListener}. Both are
 * killed with SIGKILL and restarted, the broker is stopped and started again on its
 * directories, and its connections are dropped, refused for a while, and muted (records
 * written, the acknowledgements swallowed) mid-stream. Judged at the end, in SQL, in the
 * consumer's delivery log and from the topic read end to end: every committed row's
 * message applied exactly once, no message for a rolled-back transaction, copies at the
 * broker only with the same idempotency key, and per key the messages applied in commit
 * order.
 */
class KafkaOutboxCrashTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	private static final JsonMapper mapper = JsonMapper.builder().build();

	private static final String TOPIC = "shipments";

	/** The kinds of fault, each one event of the attack. */
	enum Fault {

		/** SIGKILL of the producing application, restarted at once. */
		KILL_PRODUCER,
		/** SIGKILL of the consuming application, restarted at once. */
		KILL_CONSUMER,
		/** Every connection to the broker closed; reconnecting is allowed at once. */
		DROP,
		/** Every connection closed and new ones refused for 1.5 s. */
		REFUSE,
		/**
		 * The broker stopped and started again on its directories (its connections
		 * closed, new ones refused while it is down).
		 */
		RESTART_BROKER,
		/**
		 * The broker's answers swallowed for 4 s (longer than the relay's send timeout):
		 * records are written, their acknowledgements lost.
		 */
		MUTE

	}

	/** The size of the attack in the short and the long profile. */
	record Attack(int producerKills, int consumerKills, int drops, int refusals, int mutes, int brokerRestarts,
			int producerThreads, int keys, int pauseMillis, int shipmentsBetweenFaults) {

		static Attack current() {
			return "chaos".equals(Scale.current().name()) ? new Attack(10, 4, 6, 3, 4, 4, 4, 16, 40, 100)
					: new Attack(2, 1, 1, 1, 1, 1, 4, 16, 40, 20);
		}

		List<Fault> faults(Random random) {
			List<Fault> faults = new ArrayList<>();
			faults.addAll(Collections.nCopies(this.producerKills, Fault.KILL_PRODUCER));
			faults.addAll(Collections.nCopies(this.consumerKills, Fault.KILL_CONSUMER));
			faults.addAll(Collections.nCopies(this.drops, Fault.DROP));
			faults.addAll(Collections.nCopies(this.refusals, Fault.REFUSE));
			faults.addAll(Collections.nCopies(this.mutes, Fault.MUTE));
			faults.addAll(Collections.nCopies(this.brokerRestarts, Fault.RESTART_BROKER));
			Collections.shuffle(faults, random);
			return faults;
		}

	}

	@Test
	void killedProducersAndConsumersRestartedBrokerAndDroppedConnectionsLoseNoMessageApplyNoneTwiceAndKeepEachKeysOrder()
			throws Exception {
		Attack attack = Attack.current();
		TestDatabase database = postgres.database();
		JdbcClient jdbc = JdbcClient.create(postgres.dataSource());
		Path directory = Report.directory("kafka-crash");
		Path stopFile = directory.resolve("stop");
		Path rolledBackLog = directory.resolve("rolled-back.log");
		Path deliveryLog = directory.resolve("deliveries.log");
		Random random = new Random(20261214L);
		List<Fault> faults = attack.faults(random);
		List<Duration> restarts = new ArrayList<>();
		List<Duration> brokerRestarts = new ArrayList<>();
		List<Long> backlogAtKill = new ArrayList<>();
		long start = System.nanoTime();
		try (KafkaBroker broker = new KafkaBroker()) {
			broker.createTopic(TOPIC, 3);
			Launcher launcher = new Launcher(directory, database, broker, stopFile, rolledBackLog, deliveryLog, attack);
			Process consumer = launcher.consumer(0);
			Process producer = null;
			try {
				awaitUntil("the shipping application's tables", consumer, directory.resolve("c0.log"),
						() -> tableExists(jdbc, "applied"));
				producer = launcher.producer(0);
				awaitUntil("the first shipment", producer, directory.resolve("p0.log"),
						() -> shipments(jdbc, "p0-%") > 0);
				int producerGeneration = 0;
				int consumerGeneration = 0;
				for (Fault fault : faults) {
					long before = shipments(jdbc, "%");
					Process running = producer;
					int generation = producerGeneration;
					awaitUntil("shipments before the next fault", running, directory.resolve("p" + generation + ".log"),
							() -> shipments(jdbc, "%") >= before + 40);
					// not a wait: a random moment for the fault
					Thread.sleep(300 + random.nextInt(900));
					switch (fault) {
						case KILL_PRODUCER -> {
							backlogAtKill.add(backlog(jdbc));
							producer.destroyForcibly();
							assertThat(producer.waitFor(30, TimeUnit.SECONDS)).isTrue();
							producerGeneration++;
							long launched = System.nanoTime();
							producer = launcher.producer(producerGeneration);
							String prefix = "p" + producerGeneration;
							awaitUntil("the first shipment of " + prefix, producer, directory.resolve(prefix + ".log"),
									() -> shipments(jdbc, prefix + "-%") > 0);
							restarts.add(Duration.ofNanos(System.nanoTime() - launched));
						}
						case KILL_CONSUMER -> {
							// while it applies messages (so that some of their offsets
							// are
							// not committed yet); restarted at once, the producer goes on
							Process killed = consumer;
							awaitUntil("the consumer applying messages", killed,
									directory.resolve("c" + consumerGeneration + ".log"),
									() -> jdbc
										.sql("SELECT count(*) FROM applied "
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
						case RESTART_BROKER -> {
							long stopped = System.nanoTime();
							broker.restart();
							brokerRestarts.add(Duration.ofNanos(System.nanoTime() - stopped));
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
				Process last = producer;
				awaitUntil("the relay and the consumer to catch up", last,
						directory.resolve("p" + producerGeneration + ".log"),
						() -> backlog(jdbc) == 0 && jdbc.sql("SELECT count(DISTINCT id) FROM applied")
							.query(Long.class)
							.single() >= shipments(jdbc, "%"));
				Duration settle = Duration.ofNanos(System.nanoTime() - settleStart);
				Map<String, Object> figures = judge(jdbc, broker, rolledBackLog, deliveryLog);
				new Report("Kafka crash, outbox and inbox under kill -9, broker restarts and dropped connections")
					.parameter("faults, in order", faults)
					.parameter("producer threads; record keys", attack.producerThreads() + "; " + attack.keys())
					.parameter("topic", TOPIC + ", 3 partitions; the consumer: 3 listener threads, static membership")
					.parameter("shipments.yml",
							"send timeout 3s, request timeout 3s, lease 3s, reconciler 500ms, backoff 200ms to 2s")
					.parameter("producer pause between transactions", attack.pauseMillis() + " ms")
					.parameter("time between faults",
							attack.shipmentsBetweenFaults()
									+ " new shipments, then 300 to 1200 ms, random (seed 20261214)")
					.figure("intents pending or in flight at each producer kill", backlogAtKill)
					.figure("producer restart to its first shipment (JVM start)", Report.spread(restarts))
					.figure("broker down (stop to ready again)", Report.spread(brokerRestarts))
					.figure("settle after the last fault", Report.millis(settle))
					.figure("whole attack", Report.millis(Duration.ofNanos(System.nanoTime() - start)))
					.figures(figures)
					.write();
				for (String mustBeZero : List.of("relay intents not completed", "records without the header",
						"idempotency keys on records of two shipments", "shipments sent under two idempotency keys",
						"records at the broker for no committed shipment", "rolled-back shipments at the broker",
						"committed shipments never at the broker", "keys on two partitions",
						"committed shipments not applied", "shipments applied twice",
						"applied messages for no committed shipment", "applied seq differs from the shipment's",
						"keys applied out of commit order")) {
					assertThat(figures.get(mustBeZero)).as(mustBeZero).isEqualTo(0L);
				}
				assertThat((Long) figures.get("committed shipments")).isPositive();
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

	static Map<String, Object> judge(JdbcClient jdbc, KafkaBroker broker, Path rolledBackLog, Path deliveryLog)
			throws IOException {
		Map<String, Integer> committed = new HashMap<>();
		Map<String, String> keyOf = new HashMap<>();
		jdbc.sql("SELECT id, key, seq FROM shipment").query((rs) -> {
			committed.put(rs.getString("id"), rs.getInt("seq"));
			keyOf.put(rs.getString("id"), rs.getString("key"));
		});
		Set<String> rolledBack = new HashSet<>(lines(rolledBackLog));
		Map<String, Object> figures = new LinkedHashMap<>();
		figures.put("committed shipments", (long) committed.size());
		figures.put("rolled back on purpose", (long) rolledBack.size());
		figures.put("relay intents not completed",
				jdbc.sql("SELECT count(*) FROM eec_effect_intent WHERE effect_name = ? AND status <> 'completed'")
					.param(DurableKafka.EFFECT_NAME)
					.query(Long.class)
					.single());
		figures.put("relay attempts beyond the first",
				jdbc.sql("SELECT COALESCE(sum(attempts - 1), 0) FROM eec_effect_intent WHERE effect_name = ?")
					.param(DurableKafka.EFFECT_NAME)
					.query(Long.class)
					.single());

		// the topic, end to end
		List<ConsumerRecord<String, String>> records = broker.readAll(TOPIC, Duration.ofSeconds(60));
		Map<String, String> shipmentOfKey = new HashMap<>();
		Map<String, String> keyOfShipment = new HashMap<>();
		Map<String, Integer> partitionOfKey = new HashMap<>();
		Set<String> keysOnTwoPartitions = new HashSet<>();
		long withoutHeader = 0;
		long keyOnTwoShipments = 0;
		long shipmentUnderTwoKeys = 0;
		long uncommitted = 0;
		long rolledBackSent = 0;
		for (ConsumerRecord<String, String> record : records) {
			String idempotencyKey = header(record, DuctorMessageHeaders.IDEMPOTENCY_KEY);
			JsonNode value = mapper.readTree(record.value());
			String id = value.get("id").asString();
			if (idempotencyKey == null) {
				withoutHeader++;
				continue;
			}
			String known = shipmentOfKey.putIfAbsent(idempotencyKey, id);
			if (known != null && !known.equals(id)) {
				keyOnTwoShipments++;
			}
			String knownKey = keyOfShipment.putIfAbsent(id, idempotencyKey);
			if (knownKey != null && !knownKey.equals(idempotencyKey)) {
				shipmentUnderTwoKeys++;
			}
			if (!committed.containsKey(id)) {
				uncommitted++;
			}
			if (rolledBack.contains(id)) {
				rolledBackSent++;
			}
			Integer partition = partitionOfKey.putIfAbsent(record.key(), record.partition());
			if (partition != null && partition != record.partition()) {
				keysOnTwoPartitions.add(record.key());
			}
		}
		figures.put("records at the broker", (long) records.size());
		figures.put("duplicates at the broker (copies with the same idempotency key)",
				(long) records.size() - withoutHeader - shipmentOfKey.size());
		figures.put("records without the header", withoutHeader);
		figures.put("idempotency keys on records of two shipments", keyOnTwoShipments);
		figures.put("shipments sent under two idempotency keys", shipmentUnderTwoKeys);
		figures.put("records at the broker for no committed shipment", uncommitted);
		figures.put("rolled-back shipments at the broker", rolledBackSent);
		figures.put("committed shipments never at the broker",
				committed.keySet().stream().filter((id) -> !keyOfShipment.containsKey(id)).count());
		figures.put("keys on two partitions", (long) keysOnTwoPartitions.size());

		// the consumer
		List<String> deliveries = lines(deliveryLog);
		figures.put("deliveries to the listener", (long) deliveries.size());
		// a line: <idempotency key> <partition> <offset> <consumer generation>
		figures.put("redeliveries to the listener (a record at one offset delivered again, after a consumer kill)",
				deliveries.size() - deliveries.stream()
					.map((line) -> line.split(" ")[1] + "@" + line.split(" ")[2])
					.distinct()
					.count());
		figures.put("deliveries the inbox skipped (its key applied before)",
				deliveries.size() - deliveries.stream().map((line) -> line.split(" ")[0]).distinct().count());
		Map<String, Integer> appliedPerShipment = new HashMap<>();
		Map<String, Integer> appliedPerIdempotencyKey = new HashMap<>();
		Map<String, List<Integer>> appliedSeqs = new HashMap<>();
		long seqMismatch = 0;
		List<Map<String, Object>> applied = jdbc
			.sql("SELECT idempotency_key, id, key, seq FROM applied ORDER BY applied_order")
			.query()
			.listOfRows();
		for (Map<String, Object> row : applied) {
			String id = (String) row.get("id");
			appliedPerShipment.merge(id, 1, Integer::sum);
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
				jdbc.sql("SELECT count(DISTINCT consumer) FROM applied").query(Long.class).single());
		figures.put("committed shipments not applied",
				committed.keySet().stream().filter((id) -> !appliedPerShipment.containsKey(id)).count());
		figures.put("shipments applied twice", appliedPerShipment.values().stream().filter((n) -> n > 1).count()
				+ appliedPerIdempotencyKey.values().stream().filter((n) -> n > 1).count());
		figures.put("applied messages for no committed shipment",
				appliedPerShipment.keySet().stream().filter((id) -> !committed.containsKey(id)).count());
		figures.put("applied seq differs from the shipment's", seqMismatch);
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
				"SELECT count(*) FROM eec_routing_idempotency WHERE pool_id = 'inbox:Shipping.onShipment' AND status = 'completed'")
			.query(Long.class)
			.single());
		return figures;
	}

	/** Launches the two applications, each generation with a log of its own. */
	record Launcher(Path directory, TestDatabase database, KafkaBroker broker, Path stopFile, Path rolledBackLog,
			Path deliveryLog, Attack attack) {

		Process producer(int generation) throws IOException {
			List<String> args = ChildJvm.arguments(this.database.springProperties());
			args.addAll(List.of("--spring.kafka.bootstrap-servers=" + this.broker.bootstrapServers(),
					"--shipments.generation=p" + generation, "--shipments.threads=" + this.attack.producerThreads(),
					"--shipments.keys=" + this.attack.keys(), "--shipments.pause-millis=" + this.attack.pauseMillis(),
					"--shipments.stop-file=" + this.stopFile, "--shipments.rolled-back-log=" + this.rolledBackLog));
			return ChildJvm.start(ShipmentsApplication.class, this.directory.resolve("p" + generation + ".log"),
					List.of("-Xmx192m", "-Xss512k"), args);
		}

		Process consumer(int generation) throws IOException {
			List<String> args = ChildJvm.arguments(this.database.springProperties());
			args.addAll(List.of("--spring.kafka.bootstrap-servers=" + this.broker.bootstrapServers(),
					"--shipping.generation=c" + generation, "--shipping.delivery-log=" + this.deliveryLog));
			return ChildJvm.start(ShippingApplication.class, this.directory.resolve("c" + generation + ".log"),
					List.of("-Xmx192m", "-Xss512k"), args);
		}

	}

	/** The relay's backlog: its intents pending or in flight. */
	private static long backlog(JdbcClient jdbc) {
		return jdbc
			.sql("SELECT count(*) FROM eec_effect_intent WHERE effect_name = ? AND status IN ('pending', 'in_flight')")
			.param(DurableKafka.EFFECT_NAME)
			.query(Long.class)
			.single();
	}

	private static long shipments(JdbcClient jdbc, String idPattern) {
		if (!tableExists(jdbc, "shipment")) {
			return 0;
		}
		return jdbc.sql("SELECT count(*) FROM shipment WHERE id LIKE ?").param(idPattern).query(Long.class).single();
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

	private static String header(ConsumerRecord<?, ?> record, String name) {
		Header header = record.headers().lastHeader(name);
		return (header != null) ? new String(header.value(), java.nio.charset.StandardCharsets.UTF_8) : null;
	}

}
