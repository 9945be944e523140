package io.ductor.reliability.payments;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.simple.JdbcClient;

import io.ductor.test.PostgresExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A stranger's payments application ({@link PaymentsApplication}, written from the
 * README), two instances on one database, under clients that send every key three times
 * at once to either instance and retry with the same key on connection errors, 409 and
 * 5xx, while one instance's application context is stopped and started mid-storm. Judged
 * per key: one row, and every answer the same.
 */
class PaymentsFromOutsideTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	static ConfigurableApplicationContext app;

	/** A second instance on the same database, behind the same clients. */
	static ConfigurableApplicationContext second;

	static String secondBase;

	static JdbcClient jdbc;

	static String base;

	static final HttpClient http = HttpClient.newBuilder()
		.version(HttpClient.Version.HTTP_1_1)
		.connectTimeout(Duration.ofSeconds(2))
		.build();

	/** One answer a client got for a key. */
	record Answer(int status, String body, boolean replayed, List<String> cookies) {

		@Override
		public String toString() {
			return this.status + (this.replayed ? " replayed " : " ") + this.body;
		}

	}

	@BeforeAll
	static void start() throws IOException {
		jdbc = JdbcClient.create(postgres.dataSource());
		Arrays.stream(PaymentsApplication.SCHEMA.split(";")).forEach((sql) -> jdbc.sql(sql).update());
		app = launch(freePort());
		second = launch(freePort());
		base = "http://127.0.0.1:" + app.getEnvironment().getProperty("server.port");
		secondBase = "http://127.0.0.1:" + second.getEnvironment().getProperty("server.port");
	}

	static int freePort() throws IOException {
		try (java.net.ServerSocket socket = new java.net.ServerSocket(0)) {
			return socket.getLocalPort();
		}
	}

	static ConfigurableApplicationContext launch(int port) {
		return new SpringApplicationBuilder(PaymentsApplication.class)
			.properties("spring.config.name=payments", "server.port=" + port, "server.address=127.0.0.1",
					"spring.datasource.url=" + postgres.jdbcUrl(), "spring.datasource.username=" + postgres.username(),
					"spring.datasource.password=" + ((postgres.password() != null) ? postgres.password() : ""),
					"spring.datasource.hikari.maximum-pool-size=10",
					// REQUIRES_NEW takes a second connection: ten audited requests at
					// once wait for one until this
					"spring.datasource.hikari.connection-timeout=3000", "spring.main.banner-mode=off",
					"ductor.idempotency.wait-timeout=2s", "logging.level.io.ductor=warn")
			.run();
	}

	@AfterAll
	static void stop() {
		if (app != null) {
			app.close();
		}
		if (second != null) {
			second.close();
		}
	}

	@Test
	void retryingClientsAndAContextStopAndStartLeaveOneRowAndOneAnswerPerKey() throws Exception {
		Map<String, Queue<Answer>> answers = new ConcurrentHashMap<>();
		List<String> transfers = keys(40);
		List<String> uploads = keys(20);
		List<String> audited = keys(20);
		ExecutorService clients = Executors.newFixedThreadPool(24);
		try {
			List<CompletableFuture<?>> running = new ArrayList<>();
			for (int copy = 0; copy < 3; copy++) {
				for (String key : transfers) {
					String path = "/transfers/" + key.substring(0, 8);
					running.add(CompletableFuture.runAsync(
							() -> retrying(answers, key, () -> form(either(), "PUT", path, key, "to=alice&amount=10")),
							clients));
				}
				for (String key : uploads) {
					byte[] file = bytes(key, 50_000);
					running.add(CompletableFuture.runAsync(
							() -> retrying(answers, key,
									() -> multipart(either(), "/statements", key, "statement-" + key + ".csv", file)),
							clients));
				}
				for (String key : audited) {
					running.add(CompletableFuture.runAsync(
							() -> retrying(answers, key,
									() -> form(either(), "POST", "/transfers/audited", key, "to=bob&amount=5")),
							clients));
				}
			}
			// the operator restarts one instance's context while the clients retry on
			// both
			Thread.sleep(300);
			app.stop();
			Thread.sleep(500);
			app.start();
			CompletableFuture.allOf(running.toArray(CompletableFuture[]::new)).get(120, TimeUnit.SECONDS);
		}
		finally {
			clients.shutdownNow();
		}
		for (String key : transfers) {
			assertThat(rows("transfer", "transfer_key", key)).as("transfers of " + key).isOne();
			assertOneAnswer(key, answers.get(key), 201);
		}
		for (String key : uploads) {
			assertThat(rows("statement", "upload_key", key)).as("statements of " + key).isOne();
			assertOneAnswer(key, answers.get(key), 201);
			assertThat(answers.get(key).peek().body()).contains("\"size\":50000");
		}
		for (String key : audited) {
			assertThat(rows("transfer", "transfer_key", key)).as("transfers of " + key).isOne();
			assertOneAnswer(key, answers.get(key), 200);
			// REQUIRES_NEW commits on its own, as the README says: at least the
			// decision's audit row
			assertThat(rows("audit", "audit_key", key)).isPositive();
		}
	}

	@Test
	void aPutFormWithAnotherBodyUnderTheSameKeyIsRefusedNotReplayed() throws Exception {
		String key = UUID.randomUUID().toString();
		assertThat(form("PUT", "/transfers/r1", key, "to=alice&amount=10").statusCode()).isEqualTo(201);
		HttpResponse<String> forged = form("PUT", "/transfers/r1", key, "to=mallory&amount=9999");
		assertThat(forged.statusCode()).isEqualTo(422);
		assertThat(rows("transfer", "transfer_key", key)).isOne();
	}

	@Test
	void aTwoMegabyteUploadIsRefusedWith413AndWritesNothing() throws Exception {
		String key = UUID.randomUUID().toString();
		HttpResponse<String> response = multipart("/statements", key, "big.csv", bytes(key, 2 * 1024 * 1024));
		assertThat(response.statusCode()).isEqualTo(413);
		assertThat(response.headers().firstValue("Content-Type")).hasValue("application/problem+json");
		assertThat(rows("statement", "upload_key", key)).isZero();
		assertThat(reservations(key)).isZero();
	}

	@Test
	void a429IsSentEveryTimeAndItsWriteNeverStays() throws Exception {
		String key = UUID.randomUUID().toString();
		for (int i = 0; i < 3; i++) {
			HttpResponse<String> response = form("POST", "/transfers/limited", key, "to=carol&amount=1");
			assertThat(response.statusCode()).isEqualTo(429);
			assertThat(response.body()).isEqualTo("slow down");
			assertThat(response.headers().firstValue("Idempotency-Replayed")).isEmpty();
		}
		assertThat(rows("transfer", "transfer_key", key)).isZero();
		assertThat(reservations(key)).isZero();
	}

	@Test
	void aSuccessSettingACookieIsRolledBackWithAProblemThatSaysWhy() throws Exception {
		String key = UUID.randomUUID().toString();
		HttpResponse<String> response = form("POST", "/logins", key, "to=dave");
		assertThat(response.statusCode()).isEqualTo(500);
		assertThat(response.body()).contains("Set-Cookie");
		assertThat(response.headers().allValues("Set-Cookie")).isEmpty();
		assertThat(rows("transfer", "transfer_key", key)).isZero();
	}

	@Test
	void aSuccessCreatingAnHttpSessionCarriesItsCookieAndIsRefusedLikeAnyCookie() throws Exception {
		String key = UUID.randomUUID().toString();
		HttpResponse<String> response = form("POST", "/payees", key, "to=frank");
		assertThat(response.statusCode()).isEqualTo(500);
		assertThat(response.body()).contains("Set-Cookie");
		assertThat(rows("transfer", "transfer_key", key)).isZero();
	}

	@Test
	void aRefusalByResponseStatusExceptionGetsTheSameAnswerEveryTime() throws Exception {
		String key = UUID.randomUUID().toString();
		List<Answer> got = new ArrayList<>();
		for (int i = 0; i < 3; i++) {
			got.add(answer(form("POST", "/transfers/checked", key, "to=erin&amount=5000")));
		}
		// the container renders the error page after the filter: never stored, so never
		// replayed empty
		assertThat(got).extracting(Answer::status).containsOnly(422);
		assertThat(got).extracting(Answer::body)
			.as("bodies of " + got)
			.allSatisfy((body) -> assertThat(body).contains("\"status\":422"));
		assertThat(got).extracting(Answer::replayed).containsOnly(false);
		assertThat(rows("transfer", "transfer_key", key)).isZero();
		assertThat(reservations(key)).isZero();
	}

	static void assertOneAnswer(String key, Queue<Answer> got, int status) {
		assertThat(got).as("answers for " + key).isNotEmpty();
		assertThat(got).extracting(Answer::status).as("statuses for " + key + ": " + got).containsOnly(status);
		Set<String> bodies = got.stream().map(Answer::body).collect(Collectors.toSet());
		assertThat(bodies).as("answers for " + key).hasSize(1);
	}

	interface Send {

		HttpResponse<String> send() throws IOException, InterruptedException;

	}

	/**
	 * Sends until an answer that is not a connection error, a 409 or a 5xx, as the draft
	 * asks of clients.
	 */
	static void retrying(Map<String, Queue<Answer>> answers, String key, Send send) {
		long deadline = System.nanoTime() + Duration.ofSeconds(90).toNanos();
		while (System.nanoTime() < deadline) {
			try {
				HttpResponse<String> response = send.send();
				if (response.statusCode() != 409 && response.statusCode() < 500) {
					answers.computeIfAbsent(key, (k) -> new ConcurrentLinkedQueue<>()).add(answer(response));
					return;
				}
			}
			catch (IOException ex) {
				// connection refused while the context is stopped: retry
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				return;
			}
			try {
				// not a wait: the client's pause before it retries
				Thread.sleep(100);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				return;
			}
		}
	}

	static Answer answer(HttpResponse<String> response) {
		return new Answer(response.statusCode(), response.body(),
				response.headers().firstValue("Idempotency-Replayed").isPresent(),
				response.headers().allValues("Set-Cookie"));
	}

	/**
	 * @return one of the two instances, at random
	 */
	static String either() {
		return java.util.concurrent.ThreadLocalRandom.current().nextBoolean() ? base : secondBase;
	}

	static HttpResponse<String> form(String method, String path, String key, String body)
			throws IOException, InterruptedException {
		return form(base, method, path, key, body);
	}

	static HttpResponse<String> form(String target, String method, String path, String key, String body)
			throws IOException, InterruptedException {
		return http.send(HttpRequest.newBuilder(URI.create(target + path))
			.timeout(Duration.ofSeconds(20))
			.header("Idempotency-Key", key)
			.header("Content-Type", "application/x-www-form-urlencoded")
			.method(method, HttpRequest.BodyPublishers.ofString(body))
			.build(), HttpResponse.BodyHandlers.ofString());
	}

	static HttpResponse<String> multipart(String path, String key, String fileName, byte[] content)
			throws IOException, InterruptedException {
		return multipart(base, path, key, fileName, content);
	}

	static HttpResponse<String> multipart(String target, String path, String key, String fileName, byte[] content)
			throws IOException, InterruptedException {
		String boundary = "b" + UUID.randomUUID().toString().replace("-", "");
		ByteArrayOutputStream body = new ByteArrayOutputStream();
		body.writeBytes(("--" + boundary + "\r\nContent-Disposition: form-data; name=\"file\"; filename=\"" + fileName
				+ "\"\r\nContent-Type: text/csv\r\n\r\n")
			.getBytes(StandardCharsets.UTF_8));
		body.writeBytes(content);
		body.writeBytes(("\r\n--" + boundary + "--\r\n").getBytes(StandardCharsets.UTF_8));
		return http.send(HttpRequest.newBuilder(URI.create(target + path))
			.timeout(Duration.ofSeconds(20))
			.header("Idempotency-Key", key)
			.header("Content-Type", "multipart/form-data; boundary=" + boundary)
			.POST(HttpRequest.BodyPublishers.ofByteArray(body.toByteArray()))
			.build(), HttpResponse.BodyHandlers.ofString());
	}

	static byte[] bytes(String seed, int size) {
		byte[] line = (seed + ",100,EUR\n").getBytes(StandardCharsets.UTF_8);
		byte[] out = new byte[size];
		for (int i = 0; i < size; i++) {
			out[i] = line[i % line.length];
		}
		return out;
	}

	static List<String> keys(int count) {
		List<String> keys = new ArrayList<>();
		for (int i = 0; i < count; i++) {
			keys.add(UUID.randomUUID().toString());
		}
		return keys;
	}

	static long rows(String table, String column, String key) {
		return jdbc.sql("SELECT count(*) FROM " + table + " WHERE " + column + " = ?")
			.param(key)
			.query(Long.class)
			.single();
	}

	static long reservations(String key) {
		return jdbc.sql("SELECT count(*) FROM eec_routing_idempotency WHERE idempotency_key = ?")
			.param(key)
			.query(Long.class)
			.single();
	}

}
