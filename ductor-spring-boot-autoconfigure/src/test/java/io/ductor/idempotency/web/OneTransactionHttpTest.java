package io.ductor.idempotency.web;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import jakarta.servlet.http.Cookie;
import jakarta.servlet.http.HttpServletResponse;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.transaction.annotation.Propagation;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.ResponseStatusException;

import io.ductor.idempotency.IdempotencyRows;
import io.ductor.idempotency.IdempotencyService;
import io.ductor.test.PostgresExtension;
import io.ductor.worker.internal.PeriodicWorker;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code @Idempotent} in its default one-transaction mode, and the response rules of both
 * modes, on a real Tomcat over real HTTP on a real PostgreSQL, with a pool of 10
 * connections.
 */
class OneTransactionHttpTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	static ConfigurableApplicationContext app;

	static HttpClient http;

	static String base;

	static Bookings bookings;

	static IdempotencyService service;

	static IdempotencyRows rows;

	static JdbcClient jdbc;

	static MeterRegistry meters;

	@BeforeAll
	static void start() {
		jdbc = JdbcClient.create(postgres.dataSource());
		jdbc.sql("CREATE TABLE booking (id bigserial PRIMARY KEY, booking_key text NOT NULL, amount integer NOT NULL)")
			.update();
		// a commit-time check: a booking with a negative amount fails the transaction's
		// commit
		jdbc.sql("""
				CREATE FUNCTION booking_check() RETURNS trigger LANGUAGE plpgsql AS $$
				BEGIN
				    IF NEW.amount < 0 THEN RAISE EXCEPTION 'negative amount checked at commit'; END IF;
				    RETURN NULL;
				END $$""").update();
		jdbc.sql("""
				CREATE CONSTRAINT TRIGGER booking_check AFTER INSERT ON booking
				DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION booking_check()""").update();
		// poisons the completion of chosen keys, as a lost connection or a full disk
		// would
		jdbc.sql("CREATE TABLE poisoned_key (idempotency_key text PRIMARY KEY)").update();
		jdbc.sql("""
				CREATE FUNCTION poison_completion() RETURNS trigger LANGUAGE plpgsql AS $$
				BEGIN
				    IF NEW.status = 'completed' AND EXISTS (SELECT 1 FROM poisoned_key p
				                                            WHERE p.idempotency_key = NEW.idempotency_key) THEN
				        RAISE EXCEPTION 'completion of % poisoned', NEW.idempotency_key;
				    END IF;
				    RETURN NEW;
				END $$""").update();
		app = new SpringApplicationBuilder(BookingApplication.class).properties(postgres.springProperties())
			.properties("server.port=0", "spring.datasource.hikari.maximum-pool-size=10",
					"spring.datasource.hikari.connection-timeout=3000", "server.tomcat.threads.max=260",
					"ductor.idempotency.wait-timeout=60s", "ductor.idempotency.poll-interval=5s",
					"ductor.idempotency.max-response-size=1KB", "ductor.idempotency.sweeper.interval=1h",
					"ductor.retention.enabled=false", "spring.flyway.enabled=false")
			.run();
		// after Ductor's migrations created the table
		jdbc.sql("""
				CREATE TRIGGER poison_completion BEFORE UPDATE ON eec_routing_idempotency
				FOR EACH ROW EXECUTE FUNCTION poison_completion()""").update();
		base = "http://localhost:" + app.getEnvironment().getProperty("local.server.port");
		http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
		bookings = app.getBean(Bookings.class);
		service = app.getBean(IdempotencyService.class);
		meters = app.getBean(MeterRegistry.class);
		rows = new IdempotencyRows(postgres.dataSource());
	}

	@AfterAll
	static void stop() {
		app.close();
	}

	@BeforeEach
	void reset() {
		bookings.reset();
		jdbc.sql("DELETE FROM poisoned_key").update();
	}

	@Test
	void aCompletionThatFailsAfterTheHandlersWriteLeavesNeitherSoTheRetryBooksOnce() throws Exception {
		String key = newKey();
		jdbc.sql("INSERT INTO poisoned_key VALUES (?)").param(key).update();
		double completionFailed = released("completion_failed");
		double handlerFailed = released("handler_failed");
		HttpResponse<String> failed = send("/bookings", key);
		boolean leftNoTrace = bookingRows(key) == 0 && rows.row("", Idempotent.DEFAULT_POOL, key).isEmpty();
		// the handler did nothing wrong: the release is counted as the completion's
		// failure
		assertThat(released("completion_failed")).isEqualTo(completionFailed + 1);
		assertThat(released("handler_failed")).isEqualTo(handlerFailed);

		// the client retries; whatever a pending reservation was left behind is swept
		// after pending-ttl
		jdbc.sql("DELETE FROM poisoned_key").update();
		jdbc.sql("UPDATE eec_routing_idempotency SET expires_at = now() - interval '1 second'"
				+ " WHERE idempotency_key = ? AND status = 'pending'")
			.param(key)
			.update();
		app.getBean("ductorSweeperWorker", PeriodicWorker.class).runRound();
		HttpResponse<String> retry = send("/bookings", key);
		HttpResponse<String> again = send("/bookings", key);

		// one booking, and every answer the client got names it
		assertThat(bookingRows(key)).as("bookings for one key").isOne();
		assertThat(List.of(failed, retry, again)).filteredOn((response) -> response.statusCode() == 201)
			.extracting(HttpResponse::body)
			.containsOnly(retry.body());
		assertThat(again.headers().firstValue("Idempotency-Replayed")).hasValue("true");
		// the failed attempt said so, and left neither the booking nor the reservation
		assertProblem(failed, 500, "could not be committed");
		assertThat(leftNoTrace).isTrue();
		assertThat(bookings.runs(key)).isEqualTo(2);
	}

	@Test
	void aHandlerThatWritesAndThenThrowsOrAnswers500LeavesNoRowAndNoReservation() throws Exception {
		String key = newKey();
		assertThat(send("/bookings", key, "X-Fail", "throw").statusCode()).isEqualTo(500);
		assertThat(bookingRows(key)).isZero();
		assertThat(rows.row("", Idempotent.DEFAULT_POOL, key)).isEmpty();
		assertThat(send("/bookings", key, "X-Fail", "500").statusCode()).isEqualTo(500);
		assertThat(bookingRows(key)).isZero();
		assertThat(rows.row("", Idempotent.DEFAULT_POOL, key)).isEmpty();
		assertThat(send("/bookings", key).statusCode()).isEqualTo(201);
		assertThat(bookingRows(key)).isOne();
		assertThat(released("handler_failed")).isPositive();
		assertThat(released("server_error")).isPositive();
	}

	@Test
	void aCommitThatFailsIsAnswered500ProblemAndLeavesNoTrace() throws Exception {
		String key = newKey();
		double completionFailed = released("completion_failed");
		double handlerFailed = released("handler_failed");
		HttpResponse<String> failed = send("/bookings", key, "X-Amount", "-1");
		assertProblem(failed, 500, "could not be committed");
		assertThat(released("completion_failed")).isEqualTo(completionFailed + 1);
		assertThat(released("handler_failed")).isEqualTo(handlerFailed);
		assertThat(failed.body()).doesNotContain("\"id\"");
		assertThat(bookingRows(key)).isZero();
		assertThat(rows.row("", Idempotent.DEFAULT_POOL, key)).isEmpty();
	}

	@Test
	void aConnectionKilledBeforeTheCommitLeavesTheKeyFreeAndTheRetryBooksOnce() throws Exception {
		String key = newKey();
		bookings.closeGate(key);
		CompletableFuture<HttpResponse<String>> first = sendAsync("/bookings", key);
		awaitTrue(() -> bookings.backend(key) != null);
		// the instance loses its connection (or dies) after the handler's write, before
		// the commit
		jdbc.sql("SELECT pg_terminate_backend(?)").param(bookings.backend(key)).query(Boolean.class).single();
		bookings.openGate();
		assertProblem(first.get(30, TimeUnit.SECONDS), 500, "could not be committed");
		assertThat(bookingRows(key)).isZero();
		assertThat(rows.row("", Idempotent.DEFAULT_POOL, key)).isEmpty();

		// no sweep needed: the key is free at once
		assertThat(send("/bookings", key).statusCode()).isEqualTo(201);
		assertThat(bookingRows(key)).isOne();
	}

	@Test
	void aDuplicateStormOnAPoolOfTenLeavesConnectionsForOtherRequestsAndRunsTheHandlerOnce() throws Exception {
		String key = newKey();
		bookings.closeGate(key);
		List<CompletableFuture<HttpResponse<String>>> storm = new ArrayList<>();
		for (int i = 0; i < 200; i++) {
			storm.add(sendAsync("/bookings", key));
		}
		// one holds the key (and one connection) in its handler; 199 are parked without a
		// connection
		awaitTrue(() -> bookings.runs(key) == 1 && service.parkedDuplicates() == 199);
		// only the holder's connection and the notification listener's are in use (a
		// duplicate looking
		// again takes one for a moment)
		assertThat(HikariPool.of(app).fewestActiveWithin(Duration.ofSeconds(1))).isLessThanOrEqualTo(2);

		// unrelated requests still get connections (the pool's connection timeout is 3 s)
		for (int i = 0; i < 20; i++) {
			assertThat(send("/bookings", newKey()).statusCode()).isEqualTo(201);
		}
		assertThat(http
			.send(HttpRequest.newBuilder(URI.create(base + "/ping")).build(), HttpResponse.BodyHandlers.ofString())
			.body()).isEqualTo("1");

		bookings.openGate();
		List<HttpResponse<String>> answered = new ArrayList<>();
		for (CompletableFuture<HttpResponse<String>> response : storm) {
			answered.add(response.get(90, TimeUnit.SECONDS));
		}
		assertThat(answered).extracting(HttpResponse::statusCode).containsOnly(201);
		assertThat(answered).extracting(HttpResponse::body).containsOnly(answered.get(0).body());
		assertThat(bookings.runs(key)).isOne();
		assertThat(bookingRows(key)).isOne();
	}

	@Test
	void aResponseLargerThanTheLimitRollsAOneTransactionDecisionBackWithA500Problem() throws Exception {
		String key = newKey();
		HttpResponse<String> tooLarge = send("/bookings/sized/2000", key);
		assertProblem(tooLarge, 500, "ductor.idempotency.max-response-size (1024 bytes)");
		assertThat(tooLarge.body()).contains("TWO_PHASE").doesNotContain("xxxx");
		assertThat(bookingRows(key)).isZero();
		assertThat(rows.row("", Idempotent.DEFAULT_POOL, key)).isEmpty();
		assertThat(released("too_large")).isPositive();

		String fits = newKey();
		assertThat(send("/bookings/sized/1024", fits).body()).hasSize(1024);
		HttpResponse<String> replayed = send("/bookings/sized/1024", fits);
		assertThat(replayed.headers().firstValue("Idempotency-Replayed")).hasValue("true");
		assertThat(replayed.body()).hasSize(1024);
		assertThat(bookingRows(fits)).isOne();
	}

	@Test
	void aResponseLargerThanTheLimitIsSentButNotStoredInTwoPhaseModeAndTheKeyIsReleased() throws Exception {
		String key = newKey();
		HttpResponse<String> first = send("/bookings/two-phase/sized/5000", key);
		assertThat(first.statusCode()).isEqualTo(200);
		assertThat(first.body()).hasSize(5000).matches("x+");
		assertThat(rows.status("", Idempotent.DEFAULT_POOL, key)).isEqualTo("failed_before_commit");
		HttpResponse<String> retry = send("/bookings/two-phase/sized/5000", key);
		assertThat(retry.headers().firstValue("Idempotency-Replayed")).isEmpty();
		assertThat(bookings.runs(key)).isEqualTo(2);
	}

	@Test
	void refusalsAreSentAsTheyAreAndNeverStoredInEitherMode() throws Exception {
		for (int status : new int[] { 401, 403, 407, 429 }) {
			String key = newKey();
			HttpResponse<String> refused = send("/bookings/refused/" + status, key);
			assertThat(refused.statusCode()).isEqualTo(status);
			assertThat(refused.body()).isEqualTo("refused " + status);
			assertThat(rows.row("", Idempotent.DEFAULT_POOL, key)).isEmpty();
			assertThat(bookingRows(key)).isZero();
			assertThat(send("/bookings/refused/" + status, key).headers().firstValue("Idempotency-Replayed")).isEmpty();
			assertThat(bookings.runs(key)).isEqualTo(2);

			String twoPhase = newKey();
			assertThat(send("/bookings/two-phase/refused/" + status, twoPhase).statusCode()).isEqualTo(status);
			assertThat(rows.status("", Idempotent.DEFAULT_POOL, twoPhase)).isEqualTo("failed_before_commit");
		}
		assertThat(released("not_storable")).isGreaterThanOrEqualTo(8);
	}

	@Test
	void aSuccessCarryingSetCookieRollsBackWithAProblemInOneTransactionAndIsSentUnstoredInTwoPhase() throws Exception {
		String key = newKey();
		HttpResponse<String> refused = send("/bookings/cookie", key);
		assertProblem(refused, 500, "Set-Cookie");
		assertThat(refused.body()).contains("TWO_PHASE");
		assertThat(refused.headers().allValues("Set-Cookie")).isEmpty();
		assertThat(bookingRows(key)).isZero();
		assertThat(rows.row("", Idempotent.DEFAULT_POOL, key)).isEmpty();

		String twoPhase = newKey();
		HttpResponse<String> sent = send("/bookings/two-phase/cookie", twoPhase);
		assertThat(sent.statusCode()).isEqualTo(200);
		assertThat(sent.headers().firstValue("Set-Cookie"))
			.hasValueSatisfying((cookie) -> cookie.startsWith("session="));
		assertThat(rows.status("", Idempotent.DEFAULT_POOL, twoPhase)).isEqualTo("failed_before_commit");
		assertThat(send("/bookings/two-phase/cookie", twoPhase).headers().firstValue("Idempotency-Replayed")).isEmpty();
	}

	@Test
	void inTwoPhaseModeA5xxOrAnExceptionReleasesTheCommittedReservation() throws Exception {
		String key = newKey();
		assertThat(send("/bookings/two-phase/flaky", key, "X-Fail", "500").statusCode()).isEqualTo(500);
		assertThat(rows.status("", Idempotent.DEFAULT_POOL, key)).isEqualTo("failed_before_commit");
		assertThat(send("/bookings/two-phase/flaky", key, "X-Fail", "throw").statusCode()).isEqualTo(500);
		assertThat(rows.status("", Idempotent.DEFAULT_POOL, key)).isEqualTo("failed_before_commit");
		assertThat(send("/bookings/two-phase/flaky", key).statusCode()).isEqualTo(200);
		assertThat(rows.status("", Idempotent.DEFAULT_POOL, key)).isEqualTo("completed");
		assertThat(send("/bookings/two-phase/flaky", key).headers().firstValue("Idempotency-Replayed"))
			.hasValue("true");
		assertThat(bookings.runs(key)).isEqualTo(3);
	}

	@Test
	void anAnswerAfterTheHandlersOwnTransactionalWorkFailedIsSentButNeverStored() throws Exception {
		String key = newKey();
		double before = released("rolled_back");
		HttpResponse<String> noRoom = send("/bookings/no-room", key);
		assertThat(noRoom.statusCode()).isEqualTo(409);
		assertThat(noRoom.body()).isEqualTo("no room");
		// the joined @Transactional method marked the transaction rollback-only: nothing
		// could commit
		assertThat(bookingRows(key)).isZero();
		assertThat(rows.row("", Idempotent.DEFAULT_POOL, key)).isEmpty();
		assertThat(released("rolled_back")).isEqualTo(before + 1);
		assertThat(send("/bookings/no-room", key).headers().firstValue("Idempotency-Replayed")).isEmpty();
	}

	@Test
	void workCommittedInATransactionOfItsOwnIsNotCoveredByTheRollback() throws Exception {
		String key = newKey();
		assertThat(send("/bookings/audited", key).statusCode()).isEqualTo(500);
		assertThat(bookingRows(key)).isZero();
		assertThat(rows.row("", Idempotent.DEFAULT_POOL, key)).isEmpty();
		// REQUIRES_NEW committed separately, as the README says
		assertThat(bookingRows(key + "-audit")).isOne();
	}

	@Test
	void anErrorTheContainerRendersIsSentAsItIsAndNeverStoredInEitherMode() throws Exception {
		String key = newKey();
		double before = released("not_storable");
		HttpResponse<String> first = send("/bookings/checked", key);
		HttpResponse<String> again = send("/bookings/checked", key);
		// the error page's body is written after the filter: a replay could only send it
		// empty
		for (HttpResponse<String> response : List.of(first, again)) {
			assertThat(response.statusCode()).isEqualTo(422);
			assertThat(response.body()).contains("\"status\":422");
			assertThat(response.headers().firstValue("Idempotency-Replayed")).isEmpty();
		}
		assertThat(bookingRows(key)).isZero();
		assertThat(rows.row("", Idempotent.DEFAULT_POOL, key)).isEmpty();
		assertThat(bookings.runs(key)).isEqualTo(2);

		String twoPhase = newKey();
		assertThat(send("/bookings/two-phase/checked", twoPhase).body()).contains("\"status\":422");
		assertThat(rows.status("", Idempotent.DEFAULT_POOL, twoPhase)).isEqualTo("failed_before_commit");
		HttpResponse<String> retried = send("/bookings/two-phase/checked", twoPhase);
		assertThat(retried.body()).contains("\"status\":422");
		assertThat(retried.headers().firstValue("Idempotency-Replayed")).isEmpty();
		assertThat(bookings.runs(twoPhase)).isEqualTo(2);
		assertThat(released("not_storable")).isEqualTo(before + 4);
	}

	static double released(String reason) {
		var counter = meters.find("ductor.idempotency.released").tag("reason", reason).counter();
		return (counter != null) ? counter.count() : 0;
	}

	static long bookingRows(String key) {
		return jdbc.sql("SELECT count(*) FROM booking WHERE booking_key = ?").param(key).query(Long.class).single();
	}

	static void assertProblem(HttpResponse<String> response, int status, String detail) {
		assertThat(response.statusCode()).isEqualTo(status);
		assertThat(response.headers().firstValue("Content-Type")).hasValue("application/problem+json");
		assertThat(response.body()).contains("\"status\":" + status).contains(detail);
	}

	static String newKey() {
		return UUID.randomUUID().toString();
	}

	static HttpResponse<String> send(String path, String key, String... headers) throws Exception {
		return http.send(request(path, key, headers), HttpResponse.BodyHandlers.ofString());
	}

	static CompletableFuture<HttpResponse<String>> sendAsync(String path, String key) {
		return http.sendAsync(request(path, key), HttpResponse.BodyHandlers.ofString());
	}

	static HttpRequest request(String path, String key, String... headers) {
		HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(base + path))
			.timeout(Duration.ofSeconds(90))
			.header("Content-Type", "application/json")
			.header("Idempotency-Key", key)
			.POST(HttpRequest.BodyPublishers.ofString("{\"hotel\":\"h1\"}"));
		if (headers.length > 0) {
			request.headers(headers);
		}
		return request.build();
	}

	static void awaitTrue(java.util.function.BooleanSupplier condition) {
		org.awaitility.Awaitility.await()
			.atMost(java.time.Duration.ofSeconds(60))
			.pollInterval(java.time.Duration.ofMillis(5))
			.until(condition::getAsBoolean);
	}

	/** The pool's active connections, read through Hikari's MX bean. */
	record HikariPool(com.zaxxer.hikari.HikariPoolMXBean bean) {

		static HikariPool of(ConfigurableApplicationContext app) {
			return new HikariPool(app.getBean(com.zaxxer.hikari.HikariDataSource.class).getHikariPoolMXBean());
		}

		int fewestActiveWithin(Duration duration) throws InterruptedException {
			int fewest = Integer.MAX_VALUE;
			long end = System.nanoTime() + duration.toNanos();
			// sampled over the whole window: that connections stay held throughout has no
			// signal to wait for
			while (System.nanoTime() < end) {
				fewest = Math.min(fewest, this.bean.getActiveConnections());
				Thread.sleep(10);
			}
			return fewest;
		}

	}

	/**
	 * Counts handler runs per key, remembers each key's backend, and can hold handlers at
	 * a gate.
	 */
	static final class Bookings {

		private final Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();

		private final Map<String, Integer> backends = new ConcurrentHashMap<>();

		private volatile CountDownLatch gate = new CountDownLatch(0);

		private volatile String gatedKey;

		void reset() {
			this.runs.clear();
			this.backends.clear();
			this.gate = new CountDownLatch(0);
			this.gatedKey = null;
		}

		/** Hold the handlers of {@code key} until the gate opens. */
		void closeGate(String key) {
			this.gate = new CountDownLatch(1);
			this.gatedKey = key;
		}

		void openGate() {
			this.gate.countDown();
		}

		int runs(String key) {
			return this.runs.computeIfAbsent(key, (k) -> new AtomicInteger()).get();
		}

		Integer backend(String key) {
			return this.backends.get(key);
		}

		void ran(String key, int backend) {
			this.runs.computeIfAbsent(key, (k) -> new AtomicInteger()).incrementAndGet();
			this.backends.put(key, backend);
			if (!key.equals(this.gatedKey)) {
				return;
			}
			try {
				if (!this.gate.await(60, TimeUnit.SECONDS)) {
					throw new IllegalStateException("gate never opened");
				}
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new IllegalStateException(ex);
			}
		}

	}

	@RestController
	static class BookingController {

		private final Bookings bookings;

		private final JdbcTemplate jdbc;

		private final Hotel hotel;

		BookingController(Bookings bookings, JdbcTemplate jdbc, Hotel hotel) {
			this.bookings = bookings;
			this.jdbc = jdbc;
			this.hotel = hotel;
		}

		/**
		 * Writes a booking with the application's own JdbcTemplate: it joins the
		 * decision's transaction.
		 */
		private long book(String key, int amount) {
			Long id = this.jdbc.queryForObject("INSERT INTO booking (booking_key, amount) VALUES (?, ?) RETURNING id",
					Long.class, key, amount);
			Integer backend = this.jdbc.queryForObject("SELECT pg_backend_pid()", Integer.class);
			this.bookings.ran(key, backend);
			return id;
		}

		@PostMapping("/bookings")
		@Idempotent
		ResponseEntity<Map<String, Object>> create(@RequestHeader("Idempotency-Key") String key,
				@RequestHeader(name = "X-Fail", required = false) String fail,
				@RequestHeader(name = "X-Amount", defaultValue = "1") int amount) {
			long id = book(key, amount);
			if ("throw".equals(fail)) {
				throw new IllegalStateException("the hotel refused after the booking row was written");
			}
			if ("500".equals(fail)) {
				return ResponseEntity.internalServerError().body(Map.of("error", "try again"));
			}
			return ResponseEntity.created(URI.create("/bookings/" + id)).body(Map.of("id", id));
		}

		@PostMapping("/bookings/sized/{size}")
		@Idempotent
		String sized(@RequestHeader("Idempotency-Key") String key, @PathVariable int size) {
			book(key, 1);
			return "x".repeat(size);
		}

		@PostMapping("/bookings/two-phase/sized/{size}")
		@Idempotent(mode = IdempotencyMode.TWO_PHASE)
		String sizedTwoPhase(@RequestHeader("Idempotency-Key") String key, @PathVariable int size) {
			this.bookings.ran(key, 0);
			return "x".repeat(size);
		}

		@PostMapping("/bookings/refused/{status}")
		@Idempotent
		ResponseEntity<String> refused(@RequestHeader("Idempotency-Key") String key, @PathVariable int status) {
			book(key, 1);
			return ResponseEntity.status(status).body("refused " + status);
		}

		@PostMapping("/bookings/two-phase/refused/{status}")
		@Idempotent(mode = IdempotencyMode.TWO_PHASE)
		ResponseEntity<String> refusedTwoPhase(@PathVariable int status) {
			return ResponseEntity.status(status).body("refused " + status);
		}

		@PostMapping("/bookings/cookie")
		@Idempotent
		String cookie(@RequestHeader("Idempotency-Key") String key, HttpServletResponse response) {
			book(key, 1);
			response.addCookie(new Cookie("session", "s-" + key));
			return "booked";
		}

		@PostMapping("/bookings/two-phase/cookie")
		@Idempotent(mode = IdempotencyMode.TWO_PHASE)
		String cookieTwoPhase(@RequestHeader("Idempotency-Key") String key, HttpServletResponse response) {
			response.addCookie(new Cookie("session", "s-" + key));
			return "booked";
		}

		@PostMapping("/bookings/two-phase/flaky")
		@Idempotent(mode = IdempotencyMode.TWO_PHASE)
		ResponseEntity<String> flakyTwoPhase(@RequestHeader("Idempotency-Key") String key,
				@RequestHeader(name = "X-Fail", required = false) String fail) {
			this.bookings.ran(key, 0);
			if ("throw".equals(fail)) {
				throw new IllegalStateException("the hotel is down");
			}
			return "500".equals(fail) ? ResponseEntity.internalServerError().body("try again")
					: ResponseEntity.ok("booked");
		}

		@PostMapping("/bookings/no-room")
		@Idempotent
		ResponseEntity<String> noRoom(@RequestHeader("Idempotency-Key") String key) {
			try {
				this.hotel.holdRoom(key);
			}
			catch (IllegalStateException ex) {
				return ResponseEntity.status(409).body("no room");
			}
			return ResponseEntity.ok("held");
		}

		@PostMapping("/bookings/audited")
		@Idempotent
		String audited(@RequestHeader("Idempotency-Key") String key) {
			book(key, 1);
			this.hotel.auditSeparately(key);
			throw new IllegalStateException("the hotel refused after the audit was written");
		}

		/**
		 * Refuses the way Spring users do: the container renders the body, after the
		 * filter.
		 */
		@PostMapping("/bookings/checked")
		@Idempotent
		String checked(@RequestHeader("Idempotency-Key") String key) {
			book(key, 1);
			throw new ResponseStatusException(HttpStatus.UNPROCESSABLE_CONTENT, "over the limit");
		}

		@PostMapping("/bookings/two-phase/checked")
		@Idempotent(mode = IdempotencyMode.TWO_PHASE)
		String checkedTwoPhase(@RequestHeader("Idempotency-Key") String key) {
			this.bookings.ran(key, 0);
			throw new ResponseStatusException(HttpStatus.UNPROCESSABLE_CONTENT, "over the limit");
		}

		@GetMapping("/ping")
		String ping() {
			return String.valueOf(this.jdbc.queryForObject("SELECT 1", Integer.class));
		}

	}

	/** The application's own transactional service. */
	static class Hotel {

		private final JdbcTemplate jdbc;

		Hotel(JdbcTemplate jdbc) {
			this.jdbc = jdbc;
		}

		@Transactional
		public void holdRoom(String key) {
			this.jdbc.update("INSERT INTO booking (booking_key, amount) VALUES (?, 2)", key);
			throw new IllegalStateException("no room left");
		}

		@Transactional(propagation = Propagation.REQUIRES_NEW)
		public void auditSeparately(String key) {
			this.jdbc.update("INSERT INTO booking (booking_key, amount) VALUES (?, 3)", key + "-audit");
		}

	}

	@SpringBootConfiguration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	@Import({ BookingController.class, Hotel.class })
	static class BookingApplication {

		@Bean
		Bookings bookings() {
			return new Bookings();
		}

		@Bean
		SimpleMeterRegistry meterRegistry() {
			return new SimpleMeterRegistry();
		}

	}

}
