package io.ductor.benchmarks;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.function.IntConsumer;

import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;

import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.kafka.autoconfigure.KafkaAutoConfiguration;
import org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.core.env.Environment;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.kafka.core.KafkaTemplate;
import org.springframework.kafka.test.EmbeddedKafkaKraftBroker;
import org.springframework.modulith.events.EventExternalizationConfiguration;
import org.springframework.modulith.events.Externalized;
import org.springframework.modulith.events.RoutingTarget;
import org.springframework.scheduling.annotation.EnableAsync;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import io.ductor.autoconfigure.DuctorAutoConfiguration;
import io.ductor.effect.autoconfigure.DuctorEffectsAutoConfiguration;
import io.ductor.kafka.DurableKafka;
import io.ductor.kafka.autoconfigure.DuctorKafkaAutoConfiguration;

/**
 * Scenario 11: publishing to Kafka from a database transaction. Each transaction inserts
 * an order row and publishes a message; P producer threads; a consumer in the same JVM
 * reads the topic. Systems: Ductor's relay ({@code DurableKafka.send}, sent after the
 * commit, completed on the broker's acknowledgement) with {@value #KEYS} record keys
 * (ordered per key: one message of a key at a time) and without a record key, against
 * {@code KafkaTemplate.send} inside the transaction, fire and forget (the unsafe pattern:
 * a rolled-back order is still announced, and a message can arrive before its commit),
 * and two Spring Modulith applications whose transactions publish an
 * {@code @Externalized} event: on Modulith's JDBC registry with its own Kafka
 * externalization, and on Ductor as Modulith's registry, externalizing through the relay.
 * Measured: messages per second end to end in a closed loop (from the first transaction
 * to the last message received), and at a fixed offered load the lag from each
 * transaction's commit to the consumer receiving its message (JVM clock). The broker is
 * Spring Kafka's embedded KRaft broker in the benchmark JVM.
 */
final class KafkaScenario {

	private static final String SCENARIO = "11 kafka";

	static final int KEYS = 64;

	/** Offered load of the lag trials, messages per second. */
	static final int RATE = 200;

	enum Kind {

		DUCTOR_KEYED("Ductor relay (DurableKafka), " + KEYS + " record keys"),
		DUCTOR_UNKEYED("Ductor relay (DurableKafka), no record key"),
		TEMPLATE("KafkaTemplate.send in the transaction (unsafe), " + KEYS + " record keys"),
		MODULITH("Spring Modulith, JDBC registry, @Externalized to Kafka, " + KEYS + " record keys"),
		DUCTOR_MODULITH("Ductor as Modulith's registry, @Externalized through the relay, " + KEYS + " record keys");

		final String label;

		Kind(String label) {
			this.label = label;
		}

	}

	private final Bench bench;

	KafkaScenario(Bench bench) {
		this.bench = bench;
	}

	void run() {
		Bench.progress("scenario 11: Kafka, the relay against KafkaTemplate in the transaction");
		EmbeddedKafkaKraftBroker broker;
		try {
			broker = new EmbeddedKafkaKraftBroker(1, 3);
			broker.brokerListProperty("benchmark.kafka.brokers");
			broker.brokerProperty("auto.create.topics.enable", "false");
			broker.brokerProperty("group.initial.rebalance.delay.ms", "0");
			broker.afterPropertiesSet();
		}
		catch (RuntimeException | LinkageError ex) {
			this.bench.report.skipped(SCENARIO, "all", "messages/s",
					"skipped: the embedded Kafka broker did not start (" + ex + ")");
			return;
		}
		try {
			int n = Math.max(1000, this.bench.options.effects() / 4);
			List<Kind> kinds = List.of(Kind.values());
			Map<Kind, List<double[]>> results = new LinkedHashMap<>();
			kinds.forEach((kind) -> results.put(kind, new ArrayList<>()));
			this.bench.alternate("kafka", kinds, (kind) -> kind.label, this.bench.options.trials(), (kind) -> {
				double[] throughput = this.bench.withDatabase((db) -> closedLoop(broker, db, kind, n));
				double[] lag = this.bench.withDatabase((db) -> lagTrial(broker, db, kind));
				double[] figures = new double[] { throughput[0], lag[0], lag[1], lag[2], throughput[1] };
				results.get(kind).add(figures);
				return figures[0];
			});
			Report.Row base = null;
			for (Kind kind : kinds) {
				Report.Row row = this.bench.report.add(SCENARIO, kind.label, "messages/s end to end (N=" + n + ")",
						"/s", column(results.get(kind), 0));
				if (kind == Kind.TEMPLATE) {
					base = row;
				}
			}
			for (Kind kind : kinds) {
				this.bench.report.add(SCENARIO, kind.label, "lag commit→consumer p50 at " + RATE + "/s", "ms",
						column(results.get(kind), 1));
				this.bench.report.add(SCENARIO, kind.label, "lag commit→consumer p99 at " + RATE + "/s", "ms",
						column(results.get(kind), 2));
			}
			if (base != null) {
				for (Report.Row row : this.bench.report.rows()) {
					if (row.scenario().equals(SCENARIO) && row.metric().startsWith("messages/s")
							&& !row.system().equals(base.system())) {
						this.bench.report.note("Scenario 11: " + row.system() + " ran at "
								+ Report.ratio(row.median() / base.median()) + " of KafkaTemplate in the transaction.");
					}
				}
			}
			this.bench.report.note("Scenario 11: messages received before their transaction committed "
					+ "(KafkaTemplate in the transaction; lag trials, per trial): "
					+ column(results.get(Kind.TEMPLATE), 3).stream().map((v) -> String.valueOf(v.longValue())).toList()
					+ "; Ductor: "
					+ column(results.get(Kind.DUCTOR_KEYED), 3).stream()
						.map((v) -> String.valueOf(v.longValue()))
						.toList()
					+ ", "
					+ column(results.get(Kind.DUCTOR_UNKEYED), 3).stream()
						.map((v) -> String.valueOf(v.longValue()))
						.toList()
					+ "; Modulith's externalization: "
					+ column(results.get(Kind.MODULITH), 3).stream().map((v) -> String.valueOf(v.longValue())).toList()
					+ ", Ductor as Modulith's registry: "
					+ column(results.get(Kind.DUCTOR_MODULITH), 3).stream()
						.map((v) -> String.valueOf(v.longValue()))
						.toList()
					+ ". Copies received beyond N in the closed loop (per trial, the systems in the order above): "
					+ kinds.stream()
						.map((kind) -> column(results.get(kind), 4).stream()
							.map((v) -> String.valueOf(v.longValue()))
							.toList()
							.toString())
						.toList()
					+ ". One broker in the benchmark JVM (Spring Kafka's embedded KRaft), topics of 3 partitions, "
					+ "the consumer in the same JVM.");
		}
		finally {
			broker.destroy();
		}
	}

	private static List<Double> column(List<double[]> figures, int index) {
		return figures.stream().map((f) -> f[index]).toList();
	}

	/**
	 * @return messages per second from the first transaction to the last message
	 * received, and the copies received beyond N
	 */
	private double[] closedLoop(EmbeddedKafkaKraftBroker broker, Db db, Kind kind, int n) {
		String topic = topic(broker);
		long[] committedAt = new long[n];
		try (Producing producing = new Producing(broker, db, kind, topic, committedAt);
				Receiving receiving = new Receiving(broker, topic, n)) {
			producing.warmUp();
			long start = System.nanoTime();
			AtomicInteger next = new AtomicInteger();
			ExecutorService pool = Executors.newFixedThreadPool(this.bench.options.producers());
			for (int p = 0; p < this.bench.options.producers(); p++) {
				pool.execute(() -> {
					for (int seq = next.getAndIncrement(); seq < n; seq = next.getAndIncrement()) {
						producing.produce(seq);
					}
				});
			}
			pool.shutdown();
			awaitTermination(pool);
			long last = receiving.awaitAll();
			return new double[] { n / ((last - start) / 1e9), receiving.copies() };
		}
	}

	/**
	 * Offers {@value #RATE} messages per second for the lag seconds of the options (an
	 * open loop).
	 * @return p50 and p99 of commit to receipt, in ms, and how many arrived before their
	 * commit
	 */
	private double[] lagTrial(EmbeddedKafkaKraftBroker broker, Db db, Kind kind) {
		int n = RATE * this.bench.options.lagSeconds();
		String topic = topic(broker);
		long[] committedAt = new long[n];
		try (Producing producing = new Producing(broker, db, kind, topic, committedAt);
				Receiving receiving = new Receiving(broker, topic, n)) {
			producing.warmUp();
			ExecutorService pool = Executors.newFixedThreadPool(this.bench.options.producers());
			long interval = 1_000_000_000L / RATE;
			long start = System.nanoTime();
			for (int i = 0; i < n; i++) {
				long due = start + i * interval;
				for (long wait = due - System.nanoTime(); wait > 0; wait = due - System.nanoTime()) {
					LockSupport.parkNanos(wait);
				}
				int seq = i;
				pool.execute(() -> producing.produce(seq));
			}
			pool.shutdown();
			awaitTermination(pool);
			receiving.awaitAll();
			// the first second warms up; it is not measured
			int skip = Math.min(RATE, n / 5);
			double[] lags = new double[n - skip];
			long early = 0;
			for (int seq = skip; seq < n; seq++) {
				long received = receiving.receivedAt[seq];
				lags[seq - skip] = (received - committedAt[seq]) / 1e6;
				early += (received < committedAt[seq]) ? 1 : 0;
			}
			double[] sorted = Arrays.copyOf(lags, lags.length);
			return new double[] { Stats.percentile(sorted, 50), Stats.percentile(sorted, 99), early };
		}
	}

	private static String topic(EmbeddedKafkaKraftBroker broker) {
		String topic = "bench-" + UUID.randomUUID();
		broker.addTopics(new NewTopic(topic, 3, (short) 1));
		return topic;
	}

	private static void awaitTermination(ExecutorService pool) {
		try {
			if (!pool.awaitTermination(Bench.TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
				throw new IllegalStateException("Producers did not finish");
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("Interrupted", ex);
		}
	}

	/**
	 * One application (Ductor's auto-configuration, Spring Kafka's, Ductor's Kafka
	 * outbox) whose transactions insert an order row and publish it.
	 */
	private static final class Producing implements AutoCloseable {

		private final ConfigurableApplicationContext context;

		private final TransactionTemplate tx;

		private final JdbcClient jdbc;

		private final IntConsumer send;

		private final long[] committedAt;

		Producing(EmbeddedKafkaKraftBroker broker, Db db, Kind kind, String topic, long[] committedAt) {
			List<String> properties = new ArrayList<>(List.of(db.datasourceProperties(DuctorSystem.POOL_SIZE)));
			properties.addAll(List.of("spring.main.banner-mode=off", "spring.main.log-startup-info=false",
					"spring.kafka.bootstrap-servers=" + broker.getBrokersAsString(),
					"logging.level.org.apache.kafka=warn"));
			properties.addAll(DuctorSystem.extraProperties);
			properties.addAll(List.of("benchmark.kafka.topic=" + topic,
					"spring.modulith.events.jdbc.schema-initialization.enabled=true"));
			if (kind == Kind.MODULITH) {
				// Modulith's Kafka externalization sends JSON bytes (its
				// kafka-json.properties)
				properties.add(
						"spring.kafka.producer.value-serializer=org.apache.kafka.common.serialization.ByteArraySerializer");
			}
			Class<?> source = switch (kind) {
				case MODULITH -> ModulithKafkaApplication.class;
				case DUCTOR_MODULITH -> DuctorModulithKafkaApplication.class;
				default -> KafkaApplication.class;
			};
			this.context = new SpringApplicationBuilder(source).web(WebApplicationType.NONE)
				.properties(properties.toArray(String[]::new))
				.run();
			this.tx = new TransactionTemplate(this.context.getBean(PlatformTransactionManager.class));
			ConfigurableApplicationContext events = this.context;
			this.jdbc = JdbcClient.create(this.context.getBean(javax.sql.DataSource.class));
			this.jdbc.sql("CREATE TABLE IF NOT EXISTS bench_order (seq int PRIMARY KEY, body text NOT NULL)").update();
			this.committedAt = committedAt;
			if (kind == Kind.MODULITH || kind == Kind.DUCTOR_MODULITH) {
				this.send = (seq) -> events.publishEvent(new OrderPlaced(seq));
			}
			else if (kind == Kind.TEMPLATE) {
				@SuppressWarnings("unchecked")
				KafkaTemplate<Object, Object> template = this.context.getBean(KafkaTemplate.class);
				this.send = (seq) -> template.send(topic, "key-" + (seq % KEYS), "{\"seq\":" + seq + "}");
			}
			else {
				DurableKafka kafka = this.context.getBean(DurableKafka.class);
				boolean keyed = kind == Kind.DUCTOR_KEYED;
				this.send = (seq) -> kafka.send(topic, keyed ? "key-" + (seq % KEYS) : null, Map.of("seq", seq));
			}
		}

		/** A transaction that sends nothing measured: connections and code paths warm. */
		void warmUp() {
			this.tx.executeWithoutResult((status) -> this.jdbc.sql("SELECT 1").query(Integer.class).single());
		}

		void produce(int seq) {
			this.tx.executeWithoutResult((status) -> {
				this.jdbc.sql("INSERT INTO bench_order (seq, body) VALUES (?, ?)").params(seq, "order " + seq).update();
				this.send.accept(seq);
			});
			this.committedAt[seq] = System.nanoTime();
		}

		@Override
		public void close() {
			this.context.close();
		}

	}

	/** A consumer of the topic, from its beginning, that notes when each seq arrived. */
	private static final class Receiving implements AutoCloseable {

		final long[] receivedAt;

		private final AtomicInteger distinct = new AtomicInteger();

		private final AtomicInteger copies = new AtomicInteger();

		private final AtomicBoolean running = new AtomicBoolean(true);

		private final Thread thread;

		private volatile long lastAt;

		Receiving(EmbeddedKafkaKraftBroker broker, String topic, int n) {
			this.receivedAt = new long[n];
			KafkaConsumer<String, String> consumer = new KafkaConsumer<>(Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG,
					broker.getBrokersAsString(), ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class,
					ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class,
					ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, 10, ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false));
			List<TopicPartition> partitions = consumer.partitionsFor(topic)
				.stream()
				.map((info) -> new TopicPartition(topic, info.partition()))
				.toList();
			consumer.assign(partitions);
			consumer.seekToBeginning(partitions);
			partitions.forEach(consumer::position);
			this.thread = new Thread(() -> {
				try (consumer) {
					while (this.running.get()) {
						for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(50))) {
							long now = System.nanoTime();
							int seq = Integer.parseInt(record.value().replaceAll("\\D", ""));
							if (this.receivedAt[seq] == 0) {
								this.receivedAt[seq] = now;
								this.lastAt = now;
								this.distinct.incrementAndGet();
							}
							else {
								this.copies.incrementAndGet();
							}
						}
					}
				}
			}, "benchmark-kafka-consumer");
			this.thread.start();
		}

		/**
		 * @return when the last distinct message arrived
		 */
		long awaitAll() {
			long deadline = System.nanoTime() + Bench.TIMEOUT.toNanos();
			while (this.distinct.get() < this.receivedAt.length) {
				if (System.nanoTime() > deadline) {
					throw new IllegalStateException(
							"Only " + this.distinct.get() + " of " + this.receivedAt.length + " messages arrived");
				}
				Bench.sleep(2);
			}
			return this.lastAt;
		}

		int copies() {
			return this.copies.get();
		}

		@Override
		public void close() {
			this.running.set(false);
			try {
				this.thread.join(5000);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		}

	}

	/**
	 * The externalized event: its JSON is {@code {"seq":n}}, as the other systems send.
	 */
	@Externalized
	public record OrderPlaced(int seq) {
	}

	/**
	 * The Modulith applications' routing: {@code @Externalized} events to the trial's
	 * topic, keyed as the other systems key.
	 */
	@Configuration(proxyBeanMethods = false)
	@EnableAsync
	static class ModulithRouting {

		@Bean
		EventExternalizationConfiguration eventExternalizationConfiguration(Environment environment) {
			String topic = environment.getRequiredProperty("benchmark.kafka.topic");
			return EventExternalizationConfiguration.externalizing()
				.select(EventExternalizationConfiguration.annotatedAsExternalized())
				.route(OrderPlaced.class,
						(event) -> RoutingTarget.forTarget(topic).andKey("key-" + (event.seq() % KEYS)))
				.build();
		}

	}

	/** Spring Modulith's JDBC registry and its own externalization to Kafka. */
	@Configuration(proxyBeanMethods = false)
	@ImportModulithKafkaEvents
	@Import(ModulithRouting.class)
	static class ModulithKafkaApplication {

	}

	/** Ductor as Modulith's registry, externalizing through Ductor's Kafka relay. */
	@Configuration(proxyBeanMethods = false)
	@ImportDuctorModulithKafkaEvents
	@Import(ModulithRouting.class)
	static class DuctorModulithKafkaApplication {

	}

	@Configuration(proxyBeanMethods = false)
	@ImportAutoConfiguration({ DataSourceAutoConfiguration.class, DataSourceTransactionManagerAutoConfiguration.class,
			TransactionAutoConfiguration.class, JacksonAutoConfiguration.class, KafkaAutoConfiguration.class,
			DuctorAutoConfiguration.class, DuctorEffectsAutoConfiguration.class, DuctorKafkaAutoConfiguration.class })
	static class KafkaApplication {

	}

}
