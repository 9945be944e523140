package io.ductor.sample;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.jdbc.core.simple.JdbcClient;

import io.ductor.test.ChildJvm;
import io.ductor.test.PostgresExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The shop in a JVM of its own, killed with SIGKILL while the payment gateway has
 * committed the charge but its answer is still on the way, then started again: the order
 * finishes, charged exactly once. The database is the test's (not an embedded server
 * inside the killed JVM).
 */
class OrderSurvivesKillTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	@Test
	void shopKilledWhileTheGatewayAnswerIsInFlightFinishesTheOrderAfterARestartWithOneCharge() throws Exception {
		JdbcClient jdbc = JdbcClient.create(postgres.dataSource());
		String id;
		String chargeKey;
		int firstPort = freePort();
		Process first = launch("first", firstPort, "--sample.gateway.latency=5m");
		try {
			awaitHealthy(first, firstPort, "first");
			HttpResponse<String> placed = new ShopClient(firstPort).placeOrder("kill-9-order",
					ShopClient.order("ivan", "book-1", 2));
			assertThat(placed.statusCode()).isEqualTo(201);
			id = ShopClient.json(placed).get("id").asString();
			chargeKey = "charge:" + id;
			// the gateway committed the charge; its answer is held back by the latency
			String key = chargeKey;
			await().atMost(Duration.ofMinutes(1))
				.until(() -> count(jdbc, "SELECT count(*) FROM sample_payment WHERE idempotency_key = ?", key) == 1);
			assertThat(status(jdbc, "SELECT status FROM eec_effect_intent WHERE idempotency_key = ?", chargeKey))
				.isEqualTo("in_flight");
		}
		finally {
			first.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
		}
		assertThat(first.isAlive()).isFalse();
		assertThat(status(jdbc, "SELECT status FROM eec_run WHERE id = ?", id)).as("run before the restart")
			.isEqualTo("active");

		int secondPort = freePort();
		Process second = launch("second", secondPort, "--sample.gateway.latency=0s", "--spring.profiles.active=ops");
		try {
			awaitHealthy(second, secondPort, "second");
			await().atMost(Duration.ofMinutes(1))
				.until(() -> "completed".equals(status(jdbc, "SELECT status FROM eec_run WHERE id = ?", id)));
			await().atMost(Duration.ofMinutes(1))
				.until(() -> count(jdbc,
						"SELECT count(*) FROM eec_effect_intent WHERE run_id = ? AND status = 'completed'", id) == 3);

			assertThat(count(jdbc, "SELECT count(*) FROM sample_payment WHERE idempotency_key = ?", chargeKey)).isOne();
			assertThat(count(jdbc, "SELECT count(*) FROM sample_payment WHERE order_id = ?", id)).isOne();
			assertThat(jdbc.sql("SELECT outcome FROM sample_payment_request WHERE order_id = ? ORDER BY id")
				.param(id)
				.query(String.class)
				.list()).as("the gateway saw the retry with the same key").containsExactly("charged", "replayed");
			assertThat(count(jdbc, "SELECT attempts FROM eec_effect_intent WHERE idempotency_key = ?", chargeKey))
				.isEqualTo(2);
			assertThat(count(jdbc, "SELECT count(*) FROM eec_effect_intent WHERE run_id = ?", id)).isEqualTo(3);
			assertThat(count(jdbc, "SELECT count(*) FROM sample_receipt WHERE order_id = ?", id)).isOne();
			assertThat(count(jdbc, "SELECT count(*) FROM eec_run_transition WHERE run_id = ?", id)).isEqualTo(3);

			ShopClient shop = new ShopClient(secondPort);
			assertThat(shop.order(id).get("status").asString()).isEqualTo("completed");
			HttpResponse<String> replay = shop.placeOrder("kill-9-order", ShopClient.order("ivan", "book-1", 2));
			assertThat(replay.headers().firstValue("Idempotency-Replayed")).hasValue("true");
			assertThat(ShopClient.json(replay).get("id").asString()).isEqualTo(id);
			assertThat(shop.get("/actuator/metrics").statusCode()).as("metrics in the ops profile").isEqualTo(200);
		}
		finally {
			second.destroy();
			if (!second.waitFor(30, TimeUnit.SECONDS)) {
				second.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
			}
		}
	}

	private static Process launch(String name, int port, String... extra) throws IOException {
		List<String> command = ChildJvm.arguments(postgres.springProperties());
		command.addAll(List.of("--server.port=" + port, "--sample.gateway.failure-rate=0",
				"--sample.mailer.failure-rate=0", "--sample.mailer.latency=0s", "--ductor.effects.drainer.lease=2s",
				"--ductor.effects.drainer.poll-interval=200ms", "--ductor.effects.reconciler.interval=500ms",
				"--ductor.effects.backoff.initial=50ms", "--ductor.effects.backoff.max=200ms", SampleKafka.argument()));
		command.addAll(List.of(extra));
		return ChildJvm.start(SampleApplication.class, Path.of("target", "kill-test-" + name + ".log"), "256m",
				command);
	}

	private static void awaitHealthy(Process process, int port, String name) {
		ShopClient shop = new ShopClient(port);
		await().atMost(Duration.ofMinutes(2)).pollInterval(Duration.ofMillis(250)).until(() -> {
			if (!process.isAlive()) {
				throw new IllegalStateException("The " + name + " shop exited with " + process.exitValue()
						+ "; see target/kill-test-" + name + ".log");
			}
			try {
				return shop.get("/actuator/health").statusCode() == 200;
			}
			catch (IllegalStateException ex) {
				return false;
			}
		});
	}

	private static int freePort() throws IOException {
		try (ServerSocket socket = new ServerSocket(0)) {
			return socket.getLocalPort();
		}
	}

	private static long count(JdbcClient jdbc, String sql, Object... params) {
		return jdbc.sql(sql).params(params).query(Long.class).single();
	}

	private static String status(JdbcClient jdbc, String sql, Object... params) {
		return jdbc.sql(sql).params(params).query(String.class).single();
	}

}
