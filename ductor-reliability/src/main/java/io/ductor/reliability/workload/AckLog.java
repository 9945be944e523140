package io.ductor.reliability.workload;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * What the workload was told had committed, appended line by line to a file. Each line is
 * one {@code write} call, so it survives {@code kill -9} of the JVM (the kernel keeps
 * it); the driver checks every acknowledged tick against the database afterwards.
 */
final class AckLog implements AutoCloseable {

	private final FileChannel channel;

	AckLog(Path directory, String name) {
		try {
			Files.createDirectories(directory);
			this.channel = FileChannel.open(directory.resolve(name), StandardOpenOption.CREATE,
					StandardOpenOption.WRITE, StandardOpenOption.APPEND);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	synchronized void append(String line) {
		try {
			ByteBuffer buffer = ByteBuffer.wrap((line + "\n").getBytes(StandardCharsets.UTF_8));
			while (buffer.hasRemaining()) {
				this.channel.write(buffer);
			}
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	@Override
	public void close() throws IOException {
		this.channel.close();
	}

}
