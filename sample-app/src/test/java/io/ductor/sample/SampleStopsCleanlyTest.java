package io.ductor.sample;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.ductor.test.ChildJvm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The quick start stopped the way a user stops it (Ctrl-C, or SIGTERM from a process
 * manager): Ductor's workers stop before the embedded PostgreSQL does, so nothing is
 * logged at ERROR and no stack trace is printed.
 */
class SampleStopsCleanlyTest {

	@Test
	void stoppingTheSampleOnItsEmbeddedDatabaseLogsNoError(@TempDir Path directory) throws Exception {
		Path log = Path.of("target", "stop-test.log");
		int port = freePort();
		// alarms and the drainer poll every 100 ms, so a worker is busy whenever the stop
		// comes
		Process shop = ChildJvm.start(SampleApplication.class, log, "256m", List.of("--server.port=" + port,
				"--sample.database.directory=" + directory, "--ductor.effects.alarm-scheduler.interval=100ms",
				"--ductor.effects.drainer.poll-interval=100ms", "--ductor.effects.reconciler.interval=100ms",
				"--ductor.retention.interval=100ms", "--sample.gateway.failure-rate=0", "--sample.gateway.latency=3s"));
		try {
			ShopClient client = new ShopClient(port);
			await().atMost(Duration.ofMinutes(3)).pollInterval(Duration.ofMillis(250)).until(() -> {
				assertThat(shop.isAlive()).as("the shop is running; see " + log).isTrue();
				try {
					return client.get("/actuator/health").statusCode() == 200;
				}
				catch (IllegalStateException ex) {
					return false;
				}
			});
			// an order whose charge is in flight at the gateway (3 s) when the stop
			// comes:
			// the drainer waits for it and records its outcome before the database stops
			assertThat(client.placeOrder("stop-test", ShopClient.order("ivan", "book-1", 1)).statusCode())
				.isEqualTo(201);
			await().atMost(Duration.ofMinutes(1))
				.until(() -> client.get("/actuator/ductor").body().contains("\"inFlight\":1"));
		}
		finally {
			shop.destroy();
			if (!shop.waitFor(60, TimeUnit.SECONDS)) {
				shop.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
			}
		}
		String output = Files.readString(log);
		assertThat(output).as("the shop's log, " + log).doesNotContain(" ERROR ").doesNotContain("Exception");
	}

	private static int freePort() throws IOException {
		try (ServerSocket socket = new ServerSocket(0)) {
			return socket.getLocalPort();
		}
	}

}
