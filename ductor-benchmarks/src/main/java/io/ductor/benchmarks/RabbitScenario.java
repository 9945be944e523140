package io.ductor.benchmarks;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.function.IntConsumer;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.DefaultConsumer;
import com.rabbitmq.client.Envelope;

import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.amqp.autoconfigure.RabbitAutoConfiguration;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import io.ductor.amqp.DurableRabbit;
import io.ductor.amqp.autoconfigure.DuctorAmqpAutoConfiguration;
import io.ductor.autoconfigure.DuctorAutoConfiguration;
import io.ductor.effect.autoconfigure.DuctorEffectsAutoConfiguration;
import io.ductor.test.RabbitBroker;

/**
 * Scenario 12: publishing to RabbitMQ from a database transaction. Each transaction
 * inserts an order row and publishes a message to a topic exchange with one of
 * {@value #KEYS} routing keys; P producer threads; a consumer in the same JVM reads the
 * queue bound to it. Two systems: Ductor's relay ({@code DurableRabbit.send}, published
 * after the commit, completed on the broker's publisher confirm, the messages of one
 * routing key one at a time in commit order) against
 * {@code RabbitTemplate.convertAndSend} inside the transaction, without confirms (the
 * unsafe pattern: a rolled-back order is still announced, and a message can arrive before
 * its commit). Measured as scenario 11: messages per second end to end in a closed loop,
 * and at a fixed offered load the lag from each transaction's commit to the consumer
 * receiving its message (JVM clock). The broker is the RabbitMQ server on 127.0.0.1:5672
 * (guest/guest); each trial declares an exchange and a queue of its own and deletes them.
 */
final class RabbitScenario {

	private static final String SCENARIO = "12 rabbitmq";

	static final int KEYS = 64;

	/** Offered load of the lag trials, messages per second. */
	static final int RATE = 200;

	enum Kind {

		DUCTOR("Ductor relay (DurableRabbit), " + KEYS + " routing keys"),
		TEMPLATE("RabbitTemplate.convertAndSend in the transaction (unsafe), " + KEYS + " routing keys");

		final String label;

		Kind(String label) {
			this.label = label;
		}

	}

	private final Bench bench;

	RabbitScenario(Bench bench) {
		this.bench = bench;
	}

	void run() {
		Bench.progress("scenario 12: RabbitMQ, the relay against RabbitTemplate in the transaction");
		if (!RabbitBroker.answers()) {
			this.bench.report.skipped(SCENARIO, "all", "messages/s",
					"skipped: RabbitMQ does not answer on " + RabbitBroker.HOST + ":" + RabbitBroker.PORT);
			return;
		}
		int n = Math.max(1000, this.bench.options.effects() / 4);
		List<Kind> kinds = List.of(Kind.values());
		Map<Kind, List<double[]>> results = new LinkedHashMap<>();
		kinds.forEach((kind) -> results.put(kind, new ArrayList<>()));
		this.bench.alternate("rabbitmq", kinds, (kind) -> kind.label, this.bench.options.trials(), (kind) -> {
			double[] throughput = this.bench.withDatabase((db) -> closedLoop(db, kind, n));
			double[] lag = this.bench.withDatabase((db) -> lagTrial(db, kind));
			double[] figures = new double[] { throughput[0], lag[0], lag[1], lag[2], throughput[1] };
			results.get(kind).add(figures);
			return figures[0];
		});
		Report.Row base = null;
		for (Kind kind : kinds) {
			Report.Row row = this.bench.report.add(SCENARIO, kind.label, "messages/s end to end (N=" + n + ")", "/s",
					column(results.get(kind), 0));
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
					this.bench.report.note("Scenario 12: " + row.system() + " ran at "
							+ Report.ratio(row.median() / base.median()) + " of RabbitTemplate in the transaction.");
				}
			}
		}
		this.bench.report.note("Scenario 12: messages received before their transaction committed "
				+ "(lag trials, per trial): RabbitTemplate in the transaction " + counts(results.get(Kind.TEMPLATE), 3)
				+ "; Ductor " + counts(results.get(Kind.DUCTOR), 3)
				+ ". Copies received beyond N in the closed loop (per trial): RabbitTemplate "
				+ counts(results.get(Kind.TEMPLATE), 4) + "; Ductor " + counts(results.get(Kind.DUCTOR), 4)
				+ ". The RabbitMQ server on " + RabbitBroker.HOST + ":" + RabbitBroker.PORT
				+ ", a topic exchange and one queue per trial, the consumer (automatic acknowledgement) in the "
				+ "benchmark JVM. Spring Modulith's AMQP externalization is not measured: see BENCHMARKS.md.");
	}

	private static List<Double> column(List<double[]> figures, int index) {
		return figures.stream().map((f) -> f[index]).toList();
	}

	private static List<Long> counts(List<double[]> figures, int index) {
		return figures.stream().map((f) -> (long) f[index]).toList();
	}

	/**
	 * @return messages per second from the first transaction to the last message
	 * received, and the copies received beyond N
	 */
	private double[] closedLoop(Db db, Kind kind, int n) {
		long[] committedAt = new long[n];
		try (Receiving receiving = new Receiving(n);
				Producing producing = new Producing(db, kind, receiving.exchange, committedAt)) {
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
	private double[] lagTrial(Db db, Kind kind) {
		int n = RATE * this.bench.options.lagSeconds();
		long[] committedAt = new long[n];
		try (Receiving receiving = new Receiving(n);
				Producing producing = new Producing(db, kind, receiving.exchange, committedAt)) {
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
	 * One application (Ductor's auto-configuration, Spring Boot's RabbitMQ one, Ductor's
	 * RabbitMQ outbox) whose transactions insert an order row and publish it.
	 */
	private static final class Producing implements AutoCloseable {

		private final ConfigurableApplicationContext context;

		private final TransactionTemplate tx;

		private final JdbcClient jdbc;

		private final IntConsumer send;

		private final long[] committedAt;

		Producing(Db db, Kind kind, String exchange, long[] committedAt) {
			List<String> properties = new ArrayList<>(List.of(db.datasourceProperties(DuctorSystem.POOL_SIZE)));
			properties.addAll(List.of("spring.main.banner-mode=off", "spring.main.log-startup-info=false"));
			properties.addAll(List.of(RabbitBroker.springProperties()));
			properties.addAll(DuctorSystem.extraProperties);
			this.context = new SpringApplicationBuilder(RabbitApplication.class).web(WebApplicationType.NONE)
				.properties(properties.toArray(String[]::new))
				.run();
			this.tx = new TransactionTemplate(this.context.getBean(PlatformTransactionManager.class));
			this.jdbc = JdbcClient.create(this.context.getBean(javax.sql.DataSource.class));
			this.jdbc.sql("CREATE TABLE IF NOT EXISTS bench_order (seq int PRIMARY KEY, body text NOT NULL)").update();
			this.committedAt = committedAt;
			if (kind == Kind.TEMPLATE) {
				RabbitTemplate template = this.context.getBean(RabbitTemplate.class);
				this.send = (seq) -> template.convertAndSend(exchange, "key-" + (seq % KEYS), "{\"seq\":" + seq + "}");
			}
			else {
				DurableRabbit rabbit = this.context.getBean(DurableRabbit.class);
				this.send = (seq) -> rabbit.send(exchange, "key-" + (seq % KEYS), Map.of("seq", seq));
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

	/**
	 * A topic exchange and a queue bound to it with {@code #}, both the trial's own, and
	 * a consumer of the queue that notes when each seq arrived; closing deletes both.
	 */
	private static final class Receiving implements AutoCloseable {

		final String exchange = RabbitBroker.uniqueName("bench-exchange");

		final long[] receivedAt;

		private final String queue = RabbitBroker.uniqueName("bench-queue");

		private final AtomicInteger distinct = new AtomicInteger();

		private final AtomicInteger copies = new AtomicInteger();

		private final Connection connection;

		private final Channel channel;

		private volatile long lastAt;

		Receiving(int n) {
			this.receivedAt = new long[n];
			ConnectionFactory factory = new ConnectionFactory();
			factory.setHost(RabbitBroker.HOST);
			factory.setPort(RabbitBroker.PORT);
			factory.setUsername("guest");
			factory.setPassword("guest");
			try {
				this.connection = factory.newConnection("ductor-benchmark-consumer");
				this.channel = this.connection.createChannel();
				this.channel.exchangeDeclare(this.exchange, "topic", false, false, null);
				this.channel.queueDeclare(this.queue, false, false, false, null);
				this.channel.queueBind(this.queue, this.exchange, "#");
				this.channel.basicConsume(this.queue, true, new DefaultConsumer(this.channel) {

					@Override
					public void handleDelivery(String consumerTag, Envelope envelope, AMQP.BasicProperties properties,
							byte[] body) {
						received(body);
					}

				});
			}
			catch (IOException | TimeoutException ex) {
				throw new IllegalStateException("Cannot set up the trial's exchange and queue", ex);
			}
		}

		private void received(byte[] body) {
			long now = System.nanoTime();
			int seq = Integer.parseInt(new String(body, StandardCharsets.UTF_8).replaceAll("\\D", ""));
			if (this.receivedAt[seq] == 0) {
				this.receivedAt[seq] = now;
				this.lastAt = now;
				this.distinct.incrementAndGet();
			}
			else {
				this.copies.incrementAndGet();
			}
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
			try {
				this.channel.queueDelete(this.queue);
				this.channel.exchangeDelete(this.exchange);
				this.connection.close();
			}
			catch (IOException ex) {
				throw new IllegalStateException("Cannot delete the trial's exchange and queue", ex);
			}
		}

	}

	@Configuration(proxyBeanMethods = false)
	@ImportAutoConfiguration({ DataSourceAutoConfiguration.class, DataSourceTransactionManagerAutoConfiguration.class,
			TransactionAutoConfiguration.class, JacksonAutoConfiguration.class, RabbitAutoConfiguration.class,
			DuctorAutoConfiguration.class, DuctorEffectsAutoConfiguration.class, DuctorAmqpAutoConfiguration.class })
	static class RabbitApplication {

	}

}
