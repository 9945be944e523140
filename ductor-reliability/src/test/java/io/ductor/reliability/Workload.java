package io.ductor.reliability;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.awaitility.Awaitility;
import org.awaitility.core.ConditionTimeoutException;
import io.ductor.reliability.workload.WorkloadApplication;
import io.ductor.test.ChildJvm;
import io.ductor.test.TestDatabase;

/**
 * One workload application in a JVM of its own, on the test's classpath: launched with
 * {@link ProcessBuilder}, killed with SIGKILL ({@link Process#destroyForcibly()}), paused
 * with SIGSTOP and resumed with SIGCONT.
 */
final class Workload implements AutoCloseable {

	static final HttpClient HTTP = HttpClient.newBuilder()
		.version(HttpClient.Version.HTTP_1_1)
		.connectTimeout(Duration.ofSeconds(2))
		.build();

	/**
	 * Every workload connection's application_name starts with this, for
	 * pg_terminate_backend.
	 */
	static final String APPLICATION_NAME_PREFIX = "ductor-wl-";

	final String instance;

	final int generation;

	final int port;

	final Path log;

	private final Process process;

	private Workload(String instance, int generation, int port, Path log, Process process) {
		this.instance = instance;
		this.generation = generation;
		this.port = port;
		this.log = log;
		this.process = process;
	}

	static int freePort() throws IOException {
		try (ServerSocket socket = new ServerSocket(0)) {
			return socket.getLocalPort();
		}
	}

	/**
	 * Launch a workload JVM.
	 * @param directory the scenario's directory: logs and acknowledgement files go there
	 * @param properties further {@code key=value} application properties
	 */
	static Workload launch(Path directory, String jdbcUrl, String username, String password, String instance,
			int generation, int port, String... properties) throws IOException {
		Files.createDirectories(directory);
		List<String> command = new ArrayList<>();
		List<String> all = new ArrayList<>(
				List.of("spring.datasource.url=" + jdbcUrl, "spring.datasource.username=" + username,
						"spring.datasource.password=" + ((password != null) ? password : ""),
						"spring.datasource.hikari.data-source-properties.ApplicationName=" + APPLICATION_NAME_PREFIX
								+ instance,
						"server.port=" + port, "workload.instance=" + instance, "workload.generation=" + generation,
						"workload.ack-directory=" + directory.toAbsolutePath(), "ductor.effects.drainer.lease=3s",
						"ductor.effects.drainer.poll-interval=250ms", "ductor.effects.drainer.concurrency=4",
						"ductor.effects.drainer.batch-size=50", "ductor.effects.reconciler.interval=500ms",
						"ductor.idempotency.sweeper.interval=2s", "ductor.effects.retention=1h",
						"ductor.effects.backoff.initial=200ms", "ductor.effects.backoff.max=2s",
						"ductor.retention.interval=5s", "ductor.idempotency.wait-timeout=3s"));
		all.addAll(List.of(properties));
		// a property given twice would be bound as "first,second": the scenario's own
		// value wins
		java.util.Map<String, String> merged = new java.util.LinkedHashMap<>();
		for (String property : all) {
			int eq = property.indexOf('=');
			merged.put(property.substring(0, eq), property.substring(eq + 1));
		}
		merged.forEach((key, value) -> command.add("--" + key + "=" + value));
		Path log = directory.resolve(instance + "-g" + generation + ".log");
		Process process = ChildJvm.start(WorkloadApplication.class, log, List.of("-Xmx160m", "-Xss512k"), command);
		return new Workload(instance, generation, port, log, process);
	}

	static Workload launch(Path directory, TestDatabase database, String instance, int generation, int port,
			String... properties) throws IOException {
		return launch(directory, database.jdbcUrl(), database.username(), database.password(), instance, generation,
				port, properties);
	}

	long pid() {
		return this.process.pid();
	}

	boolean isAlive() {
		return this.process.isAlive();
	}

	/**
	 * Waits until the workload answers HTTP; fails with the end of its log when it died
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
						throw new IllegalStateException(this.instance + " died during start-up:\n" + tail());
					}
					if (get("/wl/status") == 200) {
						return true;
					}
					return false;
				});
			return Duration.ofNanos(System.nanoTime() - start);
		}
		catch (ConditionTimeoutException ex) {
			throw new IllegalStateException(this.instance + " not ready after " + timeout + ":\n" + tail());
		}
	}

	/**
	 * @return the status of GET {@code path}, or -1 when the workload does not answer
	 */
	int get(String path) {
		try {
			return HTTP
				.send(HttpRequest.newBuilder(uri(path)).timeout(Duration.ofSeconds(5)).build(),
						HttpResponse.BodyHandlers.discarding())
				.statusCode();
		}
		catch (IOException ex) {
			return -1;
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return -1;
		}
	}

	/**
	 * @return the body of GET {@code path}, or {@code null} when the workload does not
	 * answer
	 */
	String getBody(String path) {
		try {
			HttpResponse<String> response = HTTP.send(
					HttpRequest.newBuilder(uri(path)).timeout(Duration.ofSeconds(5)).build(),
					HttpResponse.BodyHandlers.ofString());
			return response.body();
		}
		catch (IOException ex) {
			return null;
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return null;
		}
	}

	/** Stops the workload's ticks; its drainer and workers keep running. */
	void quiesce() {
		try {
			HttpResponse<String> response = HTTP.send(HttpRequest.newBuilder(uri("/wl/quiesce"))
				.timeout(Duration.ofSeconds(20))
				.POST(HttpRequest.BodyPublishers.noBody())
				.build(), HttpResponse.BodyHandlers.ofString());
			if (response.statusCode() != 200) {
				throw new IllegalStateException(this.instance + " answered " + response.statusCode() + " to quiesce");
			}
		}
		catch (IOException ex) {
			throw new IllegalStateException(this.instance + " did not answer quiesce: " + ex, ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	URI uri(String path) {
		return URI.create("http://127.0.0.1:" + this.port + path);
	}

	/** SIGKILL: no shutdown hook, no lifecycle, no hand-back. */
	void kill() throws InterruptedException {
		this.process.destroyForcibly();
		if (!this.process.waitFor(30, TimeUnit.SECONDS)) {
			throw new IllegalStateException(this.instance + " survived SIGKILL for 30 s");
		}
	}

	/** SIGSTOP: the JVM freezes with whatever it holds. */
	void pause() throws IOException, InterruptedException {
		signal("-STOP");
	}

	/** SIGCONT. */
	void resume() throws IOException, InterruptedException {
		signal("-CONT");
	}

	private void signal(String signal) throws IOException, InterruptedException {
		Process kill = new ProcessBuilder("kill", signal, Long.toString(pid())).inheritIO().start();
		if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
			throw new IllegalStateException("kill " + signal + " " + pid() + " failed");
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

	String logText() throws IOException {
		return Files.readString(this.log);
	}

	@Override
	public void close() throws InterruptedException {
		if (this.process.isAlive()) {
			try {
				resume(); // a paused JVM ignores nothing but SIGKILL; resume it anyway so
							// its log is complete
			}
			catch (IOException | RuntimeException ex) {
				// already gone
			}
			kill();
		}
	}

}
