package io.ductor.kafka;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.Predicate;

import javax.sql.DataSource;

import net.jqwik.api.AfterFailureMode;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.ShrinkingMode;
import net.jqwik.api.lifecycle.AddLifecycleHook;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.AroundPropertyHook;
import net.jqwik.api.lifecycle.BeforeContainer;
import net.jqwik.api.lifecycle.PropertyExecutionResult;
import net.jqwik.api.lifecycle.PropertyExecutor;
import net.jqwik.api.lifecycle.PropertyLifecycleContext;
import net.jqwik.api.state.Action;
import net.jqwik.api.state.ActionChain;
import net.jqwik.api.state.Transformer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.StringSerializer;
import org.awaitility.core.ConditionTimeoutException;

import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.kafka.annotation.KafkaListener;
import org.springframework.kafka.config.KafkaListenerEndpointRegistry;
import org.springframework.kafka.listener.DefaultErrorHandler;
import org.springframework.kafka.listener.MessageListenerContainer;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;
import org.springframework.util.backoff.FixedBackOff;

import io.ductor.messaging.DuctorMessageHeaders;
import io.ductor.messaging.IdempotentListener;
import io.ductor.test.TestDatabase;
import io.ductor.test.TestDatabases;
import io.ductor.test.TestProfile;

import static org.awaitility.Awaitility.await;

/**
 * The Kafka relay and the inbox against a model, with their real threads: one Spring
 * context with Ductor's auto-configuration, {@link DurableKafka}'s relay, a
 * {@code @KafkaListener} with {@link IdempotentListener} that writes a row per message,
 * real PostgreSQL and the in-JVM KRaft broker, shared by every sequence, driven through
 * random sequences of:
 * <ul>
 * <li>a transaction that writes a row and sends one to three messages with one record
 * key, and commits;</li>
 * <li>the same, rolled back;</li>
 * <li>a record the listener already received sent again, headers and all, as a broker
 * redelivers it;</li>
 * <li>the listener failing after its write, once, for the next message it runs;</li>
 * <li>the listener container paused and resumed;</li>
 * <li>waiting for quiescence.</li>
 * </ul>
 * After every step: no message applied twice (one listener row per idempotency key), none
 * of a rolled-back transaction, and per record key the messages applied are a prefix of
 * those committed, in commit order. At quiescence (and at the end of every sequence):
 * every committed message applied exactly once, in commit order per key, and every relay
 * intent {@code completed}.
 */
class InboxStateMachineTest {

	static final String TOPIC = "inbox-model";

	static final Duration QUIESCENCE = Duration.ofSeconds(60);

	static TestDatabase database;

	static KafkaBroker broker;

	static ConfigurableApplicationContext context;

	static DurableKafka kafka;

	static TransactionTemplate tx;

	static JdbcClient jdbc;

	static ModelListener listener;

	static MessageListenerContainer container;

	static KafkaProducer<String, String> producer;

	static final AtomicLong worlds = new AtomicLong();

	static final AtomicLong sequences = new AtomicLong();

	static final AtomicLong steps = new AtomicLong();

	static final AtomicLong failures = new AtomicLong();

	static final Map<String, AtomicLong> actions = new ConcurrentHashMap<>();

	@BeforeContainer
	static void start() {
		database = TestDatabases.create();
		broker = new KafkaBroker();
		broker.createTopic(TOPIC, 3, Map.of());
		context = KafkaTestApp.start(database, broker, ModelListener.class, "logging.level.io.ductor=error",
				"logging.level.org.springframework.kafka=error");
		kafka = context.getBean(DurableKafka.class);
		tx = new TransactionTemplate(context.getBean(PlatformTransactionManager.class));
		jdbc = JdbcClient.create(context.getBean(DataSource.class));
		listener = context.getBean(ModelListener.class);
		container = context.getBean(KafkaListenerEndpointRegistry.class).getListenerContainer(ModelListener.ID);
		producer = new KafkaProducer<>(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers(),
				ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class,
				ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class));
	}

	@AfterContainer
	static void stop() {
		System.out.println("Inbox state machine\nsequences run: " + worlds.get() + "\nsequences passed: "
				+ sequences.get() + "\nsteps run, each followed by the invariants: " + steps.get()
				+ "\nlistener failures after its write: " + failures.get() + "\nsteps by action: "
				+ new TreeMap<>(actions));
		if (producer != null) {
			producer.close();
		}
		if (context != null) {
			context.close();
		}
		if (broker != null) {
			broker.close();
		}
		if (database != null) {
			TestDatabases.drop(database);
		}
	}

	static int maxSteps() {
		return Integer.getInteger("ductor.inbox-model.steps", TestProfile.size(15, 40));
	}

	/**
	 * jqwik's shrinking is off: a sequence runs against shared threads and a shared
	 * broker, so replaying candidates would mostly measure timing; the failure names the
	 * steps.
	 */
	@Property(afterFailure = AfterFailureMode.SAMPLE_FIRST, shrinking = ShrinkingMode.OFF)
	@AddLifecycleHook(Tries.class)
	void theRelayAndTheInboxApplyEachCommittedMessageOnceInOrder(@ForAll("sequences") ActionChain<World> chain) {
		World end = chain.withInvariant("the inbox's promises", World::check).run();
		end.quiesce();
		sequences.incrementAndGet();
	}

	/**
	 * The number of sequences, from {@code ductor.inbox-model.tries}: 10 in every build,
	 * 50 under {@code -Pchaos}.
	 */
	static class Tries implements AroundPropertyHook {

		@Override
		public PropertyExecutionResult aroundProperty(PropertyLifecycleContext context, PropertyExecutor property) {
			context.attributes().setTries(Integer.getInteger("ductor.inbox-model.tries", TestProfile.size(10, 50)));
			return property.execute();
		}

	}

	@Provide
	Arbitrary<ActionChain<World>> sequences() {
		Arbitrary<String> keys = Arbitraries.of("a", "b", "c");
		Arbitrary<Integer> counts = Arbitraries.integers().between(1, 3);
		return ActionChain.<World>startWith(World::new)
			.withAction(8, action(Combinators.combine(keys, counts).as(InboxStateMachineTest::commit), (w) -> true))
			.withAction(2, action(Combinators.combine(keys, counts).as(InboxStateMachineTest::rollBack), (w) -> true))
			.withAction(3,
					action(Arbitraries.integers().between(0, 999).map(InboxStateMachineTest::redeliver),
							World::received))
			.withAction(2, action(Arbitraries.just(FAIL_ONCE), (w) -> !listener.failNext().get()))
			.withAction(1, action(Arbitraries.just(PAUSE), (w) -> !w.paused))
			.withAction(2, action(Arbitraries.just(RESUME), (w) -> w.paused))
			.withAction(2, action(Arbitraries.just(SETTLE), (w) -> true))
			.withMaxTransformations(maxSteps());
	}

	/** One step: its kind, what a failure shows and what it does. */
	record Step(String name, String description, Consumer<World> body) {

		@Override
		public String toString() {
			return this.description;
		}

	}

	static Action.Independent<World> action(Arbitrary<Step> step, Predicate<World> when) {
		return new Action.Independent<>() {

			@Override
			public boolean precondition(World state) {
				return when.test(state);
			}

			@Override
			public Arbitrary<Transformer<World>> transformer() {
				return step.map((s) -> Transformer.mutate(s.description(), (world) -> {
					world.steps.add(s.description());
					steps.incrementAndGet();
					actions.computeIfAbsent(s.name(), (n) -> new AtomicLong()).incrementAndGet();
					s.body().accept(world);
				}));
			}

		};
	}

	static Step commit(String key, int count) {
		return new Step("commit", "commit " + count + " message(s) for " + key,
				(world) -> world.transaction(key, count, true));
	}

	static Step rollBack(String key, int count) {
		return new Step("roll back", "roll back " + count + " message(s) for " + key,
				(world) -> world.transaction(key, count, false));
	}

	static Step redeliver(int pick) {
		return new Step("redeliver", "redeliver received record #" + pick, (world) -> world.redeliver(pick));
	}

	static final Step FAIL_ONCE = new Step("fail once", "the listener fails once, after its write",
			(world) -> listener.failNext().set(true));

	static final Step PAUSE = new Step("pause", "pause the listener container", (world) -> {
		container.pause();
		world.paused = true;
	});

	static final Step RESUME = new Step("resume", "resume the listener container", (world) -> {
		container.resume();
		world.paused = false;
	});

	static final Step SETTLE = new Step("settle", "await quiescence", World::quiesce);

	/**
	 * One sequence: the messages it committed and rolled back, with record keys of its
	 * own, so what earlier sequences left behind does not count.
	 */
	static final class World {

		final String prefix = "s" + worlds.incrementAndGet() + "-";

		/** Committed idempotency keys per record key, in commit order. */
		final Map<String, List<String>> committed = new LinkedHashMap<>();

		final Set<String> rolledBack = ConcurrentHashMap.newKeySet();

		final List<String> steps = new ArrayList<>();

		boolean paused;

		int messages;

		World() {
			listener.failNext().set(false);
			if (container.isPauseRequested()) {
				container.resume();
			}
		}

		void transaction(String key, int count, boolean commit) {
			String recordKey = this.prefix + key;
			List<String> sent = new ArrayList<>();
			tx.executeWithoutResult((status) -> {
				jdbc.sql("INSERT INTO model_order (record_key) VALUES (?)").param(recordKey).update();
				for (int i = 0; i < count; i++) {
					sent.add(kafka.send(TOPIC, recordKey, recordKey + "#" + (this.messages++)));
				}
				if (!commit) {
					status.setRollbackOnly();
				}
			});
			if (commit) {
				this.committed.computeIfAbsent(recordKey, (k) -> new ArrayList<>()).addAll(sent);
			}
			else {
				this.rolledBack.addAll(sent);
			}
		}

		/** Whether the listener received a record of this sequence. */
		boolean received() {
			return !receivedRecords().isEmpty();
		}

		List<ConsumerRecord<String, String>> receivedRecords() {
			return listener.received()
				.entrySet()
				.stream()
				.filter((entry) -> entry.getValue().key().startsWith(this.prefix))
				.sorted(Map.Entry.comparingByKey())
				.map(Map.Entry::getValue)
				.toList();
		}

		/** Send a received record again, with its key, value and headers. */
		void redeliver(int pick) {
			List<ConsumerRecord<String, String>> records = receivedRecords();
			ConsumerRecord<String, String> record = records.get(pick % records.size());
			ProducerRecord<String, String> again = new ProducerRecord<>(TOPIC, record.key(), record.value());
			for (Header header : record.headers()) {
				again.headers().add(header.key(), header.value());
			}
			try {
				producer.send(again).get();
			}
			catch (Exception ex) {
				throw new IllegalStateException("Could not redeliver " + record, ex);
			}
		}

		/**
		 * The rows the listener wrote, for this sequence's keys, in the order it wrote
		 * them.
		 */
		List<Map<String, Object>> applied() {
			return jdbc.sql("SELECT idempotency_key, record_key FROM model_applied WHERE record_key LIKE ? ORDER BY id")
				.param(this.prefix + "%")
				.query()
				.listOfRows();
		}

		void check() {
			List<String> broken = new ArrayList<>();
			Map<String, List<String>> appliedByKey = new LinkedHashMap<>();
			Map<String, Integer> times = new LinkedHashMap<>();
			for (Map<String, Object> row : applied()) {
				String idempotencyKey = (String) row.get("idempotency_key");
				appliedByKey.computeIfAbsent((String) row.get("record_key"), (k) -> new ArrayList<>())
					.add(idempotencyKey);
				times.merge(idempotencyKey, 1, Integer::sum);
				if (this.rolledBack.contains(idempotencyKey)) {
					broken.add("ROLLED BACK BUT APPLIED: " + idempotencyKey);
				}
			}
			times.forEach((key, count) -> {
				if (count > 1) {
					broken.add("APPLIED " + count + " TIMES: " + key);
				}
			});
			appliedByKey.forEach((recordKey, keys) -> {
				List<String> order = this.committed.getOrDefault(recordKey, List.of());
				List<String> once = keys.stream().distinct().toList();
				if (once.size() > order.size() || !order.subList(0, once.size()).equals(once)) {
					broken.add("ORDER: under " + recordKey + " applied " + keys + ", committed " + order);
				}
			});
			if (!this.rolledBack.isEmpty()) {
				long intents = jdbc.sql("SELECT count(*) FROM eec_effect_intent WHERE idempotency_key = ANY (?)")
					.param(this.rolledBack.toArray(String[]::new))
					.query(Long.class)
					.single();
				if (intents > 0) {
					broken.add("ROLLED BACK BUT RECORDED: " + intents + " intent(s) of rolled-back transactions");
				}
			}
			if (!broken.isEmpty()) {
				throw new AssertionError(String.join("\n", broken) + "\nafter steps " + this.steps);
			}
		}

		/**
		 * Resume the listener if paused and wait until every committed message is applied
		 * and every relay intent completed; then check that each was applied exactly
		 * once, in commit order per key.
		 */
		void quiesce() {
			if (this.paused) {
				container.resume();
				this.paused = false;
			}
			try {
				await().atMost(QUIESCENCE).pollInterval(Duration.ofMillis(50)).until(this::settled);
			}
			catch (ConditionTimeoutException ex) {
				throw new AssertionError("UNSETTLED " + QUIESCENCE.toSeconds() + " s after the steps: intents "
						+ intentStatuses() + ", applied " + applied() + ", committed " + this.committed
						+ "\nafter steps " + this.steps, ex);
			}
			check();
			List<String> broken = new ArrayList<>();
			Map<String, List<String>> appliedByKey = new LinkedHashMap<>();
			for (Map<String, Object> row : applied()) {
				appliedByKey.computeIfAbsent((String) row.get("record_key"), (k) -> new ArrayList<>())
					.add((String) row.get("idempotency_key"));
			}
			this.committed.forEach((recordKey, order) -> {
				List<String> keys = appliedByKey.getOrDefault(recordKey, List.of());
				if (!keys.equals(order)) {
					broken.add("NOT EXACTLY ONCE IN ORDER: under " + recordKey + " applied " + keys + ", committed "
							+ order);
				}
			});
			if (!broken.isEmpty()) {
				throw new AssertionError(String.join("\n", broken) + "\nafter steps " + this.steps);
			}
		}

		boolean settled() {
			String[] keys = committedKeys();
			if (keys.length == 0) {
				return true;
			}
			long applied = jdbc
				.sql("SELECT count(DISTINCT idempotency_key) FROM model_applied WHERE idempotency_key = ANY (?)")
				.param(keys)
				.query(Long.class)
				.single();
			long completed = jdbc
				.sql("SELECT count(*) FROM eec_effect_intent WHERE idempotency_key = ANY (?) AND status = 'completed'")
				.param(keys)
				.query(Long.class)
				.single();
			return applied == keys.length && completed == keys.length;
		}

		String[] committedKeys() {
			return this.committed.values().stream().flatMap(List::stream).toArray(String[]::new);
		}

		List<Map<String, Object>> intentStatuses() {
			return jdbc
				.sql("SELECT idempotency_key, status, attempts, last_error FROM eec_effect_intent"
						+ " WHERE idempotency_key = ANY (?) AND status <> 'completed' ORDER BY id")
				.param(committedKeys())
				.query()
				.listOfRows();
		}

	}

	/**
	 * The model's consumer: one row per message it applies, in the listener's
	 * transaction; it can be told to fail once after that write.
	 */
	@Configuration(proxyBeanMethods = false)
	static class ModelListener {

		static final String ID = "inbox-model";

		final AtomicBoolean failNext = new AtomicBoolean();

		/** Every record received, by idempotency key (the first copy). */
		final Map<String, ConsumerRecord<String, String>> received = new ConcurrentHashMap<>();

		private final JdbcClient jdbc;

		// accessors, not fields: the listener is a proxy (the inbox's advice)
		AtomicBoolean failNext() {
			return this.failNext;
		}

		Map<String, ConsumerRecord<String, String>> received() {
			return this.received;
		}

		ModelListener(DataSource dataSource) {
			this.jdbc = JdbcClient.create(dataSource);
			this.jdbc.sql("CREATE TABLE IF NOT EXISTS model_order (id bigserial PRIMARY KEY, record_key text NOT NULL)")
				.update();
			this.jdbc.sql("""
					CREATE TABLE IF NOT EXISTS model_applied (id bigserial PRIMARY KEY, idempotency_key text NOT NULL,
					    record_key text NOT NULL, payload text NOT NULL)""").update();
		}

		@Bean
		DefaultErrorHandler modelErrorHandler() {
			return new DefaultErrorHandler(new FixedBackOff(50, 100));
		}

		@KafkaListener(id = ID, topics = TOPIC, groupId = ID)
		@IdempotentListener
		public void onRecord(ConsumerRecord<String, String> record) {
			Header header = record.headers().lastHeader(DuctorMessageHeaders.IDEMPOTENCY_KEY);
			String idempotencyKey = new String(header.value(), StandardCharsets.UTF_8);
			this.received.putIfAbsent(idempotencyKey, record);
			this.jdbc.sql("INSERT INTO model_applied (idempotency_key, record_key, payload) VALUES (?, ?, ?)")
				.params(idempotencyKey, record.key(), record.value())
				.update();
			if (this.failNext.compareAndSet(true, false)) {
				failures.incrementAndGet();
				throw new IllegalStateException("the listener fails after its write, before the commit");
			}
		}

	}

}
