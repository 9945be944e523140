package io.ductor.effect;

import java.io.FileOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.ductor.test.TestDatabase;

/**
 * A drainer of a receiver that cannot deduplicate, in a JVM of its own, for the crash
 * test. The receiver writes one line per call to a log file before it does anything else,
 * one {@code write} each, so the log survives {@code kill -9} and says exactly which
 * attempts reached it.
 */
public final class CrashingMailerMain {

	private CrashingMailerMain() {
	}

	/**
	 * @param args JDBC URL, receiver log file, user name and, optionally, password
	 */
	public static void main(String[] args) throws Exception {
		Letters.log = new FileOutputStream(args[1], true);
		TestDatabase database = new TestDatabase(args[0], args[2], (args.length > 3) ? args[3] : null, "crash");
		EffectInstances.start(database, Config.class, "ductor.effects.drainer.lease=2s",
				"ductor.effects.reconciler.interval=300ms", "ductor.effects.drainer.poll-interval=100ms",
				"ductor.effects.drainer.concurrency=4", "ductor.effects.drainer.batch-size=20");
		Thread.currentThread().join();
	}

	/** Sends letters: a receiver that cannot tell a second call from a first. */
	public static class Letters {

		static volatile FileOutputStream log;

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
			}
			// a letter takes a while to send: crashes land while letters are on their way
			Thread.sleep(20);
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
