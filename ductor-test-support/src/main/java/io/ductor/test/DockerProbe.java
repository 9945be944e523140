package io.ductor.test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.testcontainers.DockerClientFactory;

/**
 * Decides whether a Docker engine answers, quickly and quietly.
 *
 * <p>
 * {@code DUCTOR_TEST_DOCKER=false} skips the probe, {@code true} always runs it. When
 * unset, Testcontainers is only asked if some Docker endpoint hint exists (DOCKER_HOST, a
 * Testcontainers or Docker config directory, a well-known socket), because asking it on a
 * Docker-less machine logs an ERROR listing every failed strategy.
 */
final class DockerProbe {

	private static final Logger log = LoggerFactory.getLogger(DockerProbe.class);

	private static final Duration TIMEOUT = Duration.ofSeconds(30);

	private DockerProbe() {
	}

	static boolean dockerAvailable() {
		String setting = Settings.get(Settings.DOCKER);
		if ("false".equalsIgnoreCase(setting)) {
			log.debug("{}=false: not looking for Docker", Settings.DOCKER);
			return false;
		}
		if (!"true".equalsIgnoreCase(setting) && !endpointHintPresent()) {
			log.debug("No Docker endpoint found; set {}=true to ask Testcontainers anyway", Settings.DOCKER);
			return false;
		}
		return askTestcontainers();
	}

	private static boolean askTestcontainers() {
		long start = System.nanoTime();
		// A daemon thread so that a wedged engine cannot hold the test JVM; the timeout
		// bounds our wait.
		CompletableFuture<Boolean> answer = new CompletableFuture<>();
		Thread thread = new Thread(() -> {
			try {
				answer.complete(DockerClientFactory.instance().isDockerAvailable());
			}
			catch (Throwable e) {
				answer.completeExceptionally(e);
			}
		}, "ductor-docker-probe");
		thread.setDaemon(true);
		thread.start();
		try {
			boolean available = answer.get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
			log.debug("Docker available: {} (asked in {} ms)", available, (System.nanoTime() - start) / 1_000_000);
			return available;
		}
		catch (TimeoutException e) {
			log.warn("Docker did not answer within {} s; not using Testcontainers", TIMEOUT.toSeconds());
		}
		catch (ExecutionException e) {
			log.warn("Docker probe failed ({}); not using Testcontainers", e.getCause().toString());
		}
		catch (InterruptedException e) {
			Thread.currentThread().interrupt();
		}
		return false;
	}

	private static boolean endpointHintPresent() {
		if (System.getenv("DOCKER_HOST") != null || System.getProperty("docker.host") != null
				|| System.getProperty("os.name", "").toLowerCase(Locale.ROOT).contains("win")) {
			return true; // Windows engines listen on a named pipe that cannot be checked
							// cheaply
		}
		Path home = Path.of(System.getProperty("user.home"));
		List<Path> candidates = new ArrayList<>(
				List.of(home.resolve(".testcontainers.properties"), home.resolve(".docker"), // Docker
																								// Desktop
																								// sockets
																								// and
																								// docker
																								// contexts
																								// live
																								// here
						Path.of("/var/run/docker.sock"), Path.of("/run/docker.sock"), home.resolve(".colima"),
						home.resolve(".rd/docker.sock"), home.resolve(".orbstack/run/docker.sock")));
		String runtimeDir = System.getenv("XDG_RUNTIME_DIR");
		if (runtimeDir != null) {
			candidates.add(Path.of(runtimeDir, "docker.sock"));
		}
		return candidates.stream().anyMatch(Files::exists);
	}

}
