package io.ductor.reliability.retreat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.stereotype.Component;

import io.ductor.effect.DurableEffect;
import io.ductor.effect.EffectContext;
import io.ductor.effect.Receiver;

/**
 * The mail server: it cannot deduplicate, so every call sends a mail. Each call is one
 * line appended to {@code retreat.mail-log} in a single write before the mail "goes out"
 * (a slow server), so the log holds every call that reached it, even from a JVM killed a
 * moment later.
 */
@Component
public class Mailer {

	private final Path log;

	private final long sendMillis;

	private final String process = ManagementFactory.getRuntimeMXBean().getName();

	Mailer(@Value("${retreat.mail-log}") Path log, @Value("${retreat.send-millis:30}") long sendMillis) {
		this.log = log;
		this.sendMillis = sendMillis;
	}

	@DurableEffect(name = "retreat.welcome", key = "'welcome:' + #guest", receiver = Receiver.NOT_IDEMPOTENT)
	public void welcome(String guest, String address) {
		EffectContext context = EffectContext.current();
		String line = context.idempotencyKey() + " " + context.attempt() + " " + this.process + "\n";
		try {
			Files.write(this.log, line.getBytes(StandardCharsets.UTF_8), StandardOpenOption.CREATE,
					StandardOpenOption.WRITE, StandardOpenOption.APPEND);
			Thread.sleep(this.sendMillis);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("interrupted while sending", ex);
		}
	}

}
