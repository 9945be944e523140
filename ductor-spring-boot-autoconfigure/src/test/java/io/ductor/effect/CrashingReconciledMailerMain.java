package io.ductor.effect;

import java.io.FileOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.ductor.test.TestDatabase;

/**
 * A drainer of a receiver that cannot deduplicate but keeps a sent log its reconciler
 * reads, in a JVM of its own, for the reconciling crash test. A letter is sent by writing
 * its line to the log (one {@code write}, which survives {@code kill -9}); every third
 * letter's first call loses its confirmation (it throws after the line is written). The
 * reconciler answers from the log, except for letters whose number ends in 0, about which
 * it cannot tell ({@code UNKNOWN}).
 */
public final class CrashingReconciledMailerMain {

	private CrashingReconciledMailerMain() {
	}

	/**
	 * @param args JDBC URL, sent log file, user name and, optionally, password
	 */
	public static void main(String[] args) throws Exception {
		Path log = Paths.get(args[1]);
		if (Files.exists(log)) {
			Files.readAllLines(log, StandardCharsets.UTF_8)
				.stream()
				.filter((line) -> !line.isEmpty())
				.forEach((line) -> Letters.sent.add(line.split(" ")[0]));
		}
		Letters.log = new FileOutputStream(args[1], true);
		TestDatabase database = new TestDatabase(args[0], args[2], (args.length > 3) ? args[3] : null, "crash");
		EffectInstances.start(database, Config.class, "ductor.effects.drainer.lease=2s",
				"ductor.effects.reconciler.interval=200ms", "ductor.effects.drainer.poll-interval=100ms",
				"ductor.effects.drainer.concurrency=4", "ductor.effects.drainer.batch-size=20",
				"ductor.effects.reconciliation.backoff.initial=50ms", "ductor.effects.reconciliation.backoff.max=200ms",
				"ductor.effects.reconciliation.max-rounds=3");
		Thread.currentThread().join();
	}

	/**
	 * Sends letters: a receiver that cannot tell a second call from a first, with a sent
	 * log.
	 */
	public static class Letters {

		static volatile FileOutputStream log;

		static final Set<String> sent = ConcurrentHashMap.newKeySet();

		@DurableEffect(name = "letter", key = "#id", receiver = Receiver.NOT_IDEMPOTENT)
		public void send(String id) throws InterruptedException {
			EffectContext context = EffectContext.current();
			byte[] line = (context.idempotencyKey() + " " + context.attempt() + "\n").getBytes(StandardCharsets.UTF_8);
			synchronized (Letters.class) {
				try {
					log.write(line);
				}
				catch (IOException ex) {
					throw new UncheckedIOException(ex);
				}
				sent.add(context.idempotencyKey());
			}
			// a letter takes a while to send: crashes land while letters are on their way
			Thread.sleep(20);
			if (number(id) % 3 == 0 && context.attempt() == 1) {
				throw new IllegalStateException("confirmation lost");
			}
		}

		@EffectReconciler("letter")
		public ReconcileOutcome wasSent(String key) throws InterruptedException {
			// reading the sent log takes a while too: crashes land during reconciliation
			// rounds
			Thread.sleep(10);
			if (number(key) % 10 == 0) {
				return ReconcileOutcome.UNKNOWN;
			}
			return sent.contains(key) ? ReconcileOutcome.APPLIED : ReconcileOutcome.NOT_APPLIED;
		}

		static int number(String key) {
			return Integer.parseInt(key.substring(key.lastIndexOf('-') + 1));
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class Config {

		@Bean
		Letters letters() {
			return new Letters();
		}

	}

}
