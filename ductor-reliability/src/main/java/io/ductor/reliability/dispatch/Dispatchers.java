package io.ductor.reliability.dispatch;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.beans.factory.DisposableBean;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.context.event.ApplicationReadyEvent;
import org.springframework.context.event.EventListener;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Component;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import io.ductor.amqp.DurableRabbit;

/**
 * The dispatcher threads. Each transaction takes the next {@code seq} of a routing key (a
 * counter row, locked until the commit), inserts a {@code parcel} row and publishes the
 * message to {@code dispatch.exchange}; one in {@code dispatch.rollback-every} rolls back
 * after the send, and its id is appended to {@code dispatch.rolled-back-log} (one write
 * per line, which survives {@code kill -9}). The threads stop when
 * {@code dispatch.stop-file} exists; the relay keeps draining.
 */
@Component
class Dispatchers implements DisposableBean {

	private static final Log logger = LogFactory.getLog(Dispatchers.class);

	private final JdbcClient jdbc;

	private final DurableRabbit rabbit;

	private final TransactionTemplate tx;

	private final String exchange;

	private final String generation;

	private final int threads;

	private final int keys;

	private final int rollbackEvery;

	private final long pauseMillis;

	private final Path stopFile;

	private final Path rolledBackLog;

	private final List<Thread> running = new ArrayList<>();

	private volatile boolean stopping;

	Dispatchers(JdbcClient jdbc, DurableRabbit rabbit, PlatformTransactionManager transactionManager,
			@Value("${dispatch.exchange}") String exchange, @Value("${dispatch.generation}") String generation,
			@Value("${dispatch.threads:4}") int threads, @Value("${dispatch.keys:12}") int keys,
			@Value("${dispatch.rollback-every:10}") int rollbackEvery,
			@Value("${dispatch.pause-millis:5}") long pauseMillis, @Value("${dispatch.stop-file}") Path stopFile,
			@Value("${dispatch.rolled-back-log}") Path rolledBackLog) {
		this.jdbc = jdbc;
		this.rabbit = rabbit;
		this.tx = new TransactionTemplate(transactionManager);
		this.exchange = exchange;
		this.generation = generation;
		this.threads = threads;
		this.keys = keys;
		this.rollbackEvery = rollbackEvery;
		this.pauseMillis = pauseMillis;
		this.stopFile = stopFile;
		this.rolledBackLog = rolledBackLog;
	}

	@EventListener(ApplicationReadyEvent.class)
	void start() {
		for (int t = 0; t < this.threads; t++) {
			int thread = t;
			Thread worker = new Thread(() -> dispatch(thread), "dispatcher-" + t);
			worker.setDaemon(true);
			this.running.add(worker);
			worker.start();
		}
	}

	private void dispatch(int thread) {
		ThreadLocalRandom random = ThreadLocalRandom.current();
		for (long n = 0; !this.stopping && !Files.exists(this.stopFile); n++) {
			String id = this.generation + "-" + thread + "-" + n;
			String key = "key-" + random.nextInt(this.keys);
			boolean rollBack = random.nextInt(this.rollbackEvery) == 0;
			try {
				this.tx.executeWithoutResult((status) -> {
					int seq = this.jdbc
						.sql("INSERT INTO parcel_counter (key, n) VALUES (?, 1) "
								+ "ON CONFLICT (key) DO UPDATE SET n = parcel_counter.n + 1 RETURNING n")
						.param(key)
						.query(Integer.class)
						.single();
					this.jdbc.sql("INSERT INTO parcel (id, key, seq) VALUES (?, ?, ?)").params(id, key, seq).update();
					this.rabbit.send(this.exchange, key, Map.of("id", id, "key", key, "seq", seq));
					if (rollBack) {
						status.setRollbackOnly();
					}
				});
				if (rollBack) {
					append(this.rolledBackLog, id);
				}
			}
			catch (RuntimeException ex) {
				logger.warn("Parcel " + id + " failed: " + ex);
				sleep(100);
			}
			sleep(this.pauseMillis);
		}
	}

	private static void append(Path log, String line) {
		try {
			Files.write(log, (line + "\n").getBytes(StandardCharsets.UTF_8), StandardOpenOption.CREATE,
					StandardOpenOption.WRITE, StandardOpenOption.APPEND);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	private static void sleep(long millis) {
		try {
			Thread.sleep(millis);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	@Override
	public void destroy() throws InterruptedException {
		this.stopping = true;
		for (Thread thread : this.running) {
			thread.join(5000);
		}
	}

}
