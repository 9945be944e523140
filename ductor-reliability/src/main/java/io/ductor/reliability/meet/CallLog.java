package io.ductor.reliability.meet;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.time.temporal.ChronoUnit;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.stereotype.Component;

import io.ductor.effect.EffectContext;

/**
 * The receivers' own log, shared by the instances: one line per event, appended in one
 * write ({@code what key attempt pid epoch-microseconds}).
 */
@Component
public class CallLog {

	private final Path file;

	private final long pid = ProcessHandle.current().pid();

	CallLog(@Value("${meet.call-log}") Path file) {
		this.file = file;
	}

	void write(String what) {
		EffectContext context = EffectContext.current();
		Instant now = Instant.now();
		long micros = ChronoUnit.MICROS.between(Instant.EPOCH, now);
		String line = what + " " + context.idempotencyKey() + " " + context.attempt() + " " + this.pid + " " + micros
				+ "\n";
		try {
			Files.write(this.file, line.getBytes(StandardCharsets.UTF_8), StandardOpenOption.CREATE,
					StandardOpenOption.WRITE, StandardOpenOption.APPEND);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

}
