package io.ductor.reliability;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.awaitility.Awaitility;
import org.awaitility.core.ConditionTimeoutException;
import io.ductor.reliability.booking.BookingApplication;
import io.ductor.test.ChildJvm;
import io.ductor.test.TestDatabase;

/**
 * One booking application ({@link BookingApplication}) in a JVM of its own, launched with
 * the test's classpath and killed with SIGKILL.
 */
final class BookingInstance implements AutoCloseable {

	/**
	 * Every connection of a booking instance has an application_name starting with this.
	 */
	static final String APPLICATION_NAME_PREFIX = "booking-app-";

	final String name;

	final int port;

	private final Path log;

	private final Process process;

	private BookingInstance(String name, int port, Path log, Process process) {
		this.name = name;
		this.port = port;
		this.log = log;
		this.process = process;
	}

	/**
	 * Launch an instance.
	 * @param directory where its log goes
	 * @param name the instance and its start, for example {@code a-g2}: recorded on every
	 * booking it makes
	 */
	static BookingInstance launch(Path directory, TestDatabase database, String name, int port) throws IOException {
		Files.createDirectories(directory);
		List<String> args = ChildJvm.arguments(database.springProperties());
		args.addAll(List.of(
				"--spring.datasource.hikari.data-source-properties.ApplicationName=" + APPLICATION_NAME_PREFIX + name,
				"--server.port=" + port, "--booking.instance=" + name));
		Path log = directory.resolve(name + ".log");
		Process process = ChildJvm.start(BookingApplication.class, log, List.of("-Xmx160m", "-Xss512k"), args);
		return new BookingInstance(name, port, log, process);
	}

	URI uri(String path) {
		return URI.create("http://127.0.0.1:" + this.port + path);
	}

	/**
	 * Waits until the instance answers HTTP; fails with the end of its log when it died
	 * or took too long.
	 */
	Duration awaitReady(Duration timeout) throws InterruptedException {
		long start = System.nanoTime();
		try {
			Awaitility.await()
				.atMost(timeout)
				.pollDelay(Duration.ZERO)
				.pollInterval(Duration.ofMillis(100))
				.until(() -> {
					if (!this.process.isAlive()) {
						throw new IllegalStateException(this.name + " died during start-up:\n" + tail());
					}
					try {
						HttpResponse<Void> response = Workload.HTTP.send(
								HttpRequest.newBuilder(uri("/ready")).timeout(Duration.ofSeconds(2)).build(),
								HttpResponse.BodyHandlers.discarding());
						if (response.statusCode() == 200) {
							return true;
						}
					}
					catch (IOException ex) {
						// not listening yet
					}
					return false;
				});
			return Duration.ofNanos(System.nanoTime() - start);
		}
		catch (ConditionTimeoutException ex) {
			throw new IllegalStateException(this.name + " not ready after " + timeout + ":\n" + tail());
		}
	}

	/** SIGKILL: no shutdown hook, no lifecycle, no hand-back. */
	void kill() throws InterruptedException {
		this.process.destroyForcibly();
		if (!this.process.waitFor(30, TimeUnit.SECONDS)) {
			throw new IllegalStateException(this.name + " survived SIGKILL for 30 s");
		}
	}

	String tail() {
		try {
			List<String> lines = Files.readAllLines(this.log);
			return String.join("\n", lines.subList(Math.max(0, lines.size() - 40), lines.size()));
		}
		catch (IOException ex) {
			return "(no log: " + ex + ")";
		}
	}

	@Override
	public void close() throws InterruptedException {
		if (this.process.isAlive()) {
			kill();
		}
	}

}
