package io.ductor.idempotency.web;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
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

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
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
import org.springframework.core.Ordered;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.filter.OncePerRequestFilter;

import io.ductor.idempotency.DuplicatePolicy;
import io.ductor.idempotency.IdempotencyRows;
import io.ductor.idempotency.IdempotencyService;
import io.ductor.idempotency.IdempotentRequest;
import io.ductor.idempotency.ReserveOutcome;
import io.ductor.idempotency.web.internal.RequestFingerprinter;
import io.ductor.test.PostgresExtension;
import io.ductor.worker.internal.PeriodicWorker;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code @Idempotent} handler methods on a real Tomcat, over real HTTP, on a real
 * PostgreSQL.
 */
class IdempotentHttpTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	static ConfigurableApplicationContext app;

	static HttpClient http;

	static String base;

	static Shop shop;

	static IdempotencyService service;

	static IdempotencyRows rows;

	@BeforeAll
	static void start() {
		app = new SpringApplicationBuilder(ShopApplication.class).properties(postgres.springProperties())
			.properties("server.port=0", "spring.datasource.hikari.maximum-pool-size=20",
					"server.tomcat.threads.max=260", "ductor.idempotency.wait-timeout=60s",
					"ductor.idempotency.sweeper.interval=1h", "ductor.retention.enabled=false")
			.run();
		base = "http://localhost:" + app.getEnvironment().getProperty("local.server.port");
		http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
		shop = app.getBean(Shop.class);
		service = app.getBean(IdempotencyService.class);
		rows = new IdempotencyRows(postgres.dataSource());
	}

	@AfterAll
	static void stop() {
		app.close();
	}

	@BeforeEach
	void reset() {
		shop.reset();
	}

	@Test
	void twoHundredConcurrentRequestsWithOneKeyUnderWaitRunTheHandlerOnceAndAllGetTheSameAnswer() throws Exception {
		String key = newKey();
		shop.closeGate();
		List<CompletableFuture<HttpResponse<String>>> responses = new ArrayList<>();
		for (int i = 0; i < 200; i++) {
			responses.add(sendAsync("/orders", key, "{\"customer\":\"alice\"}"));
		}
		// all 200 have reached the server: one is in the handler, the other 199 are
		// parked on its key
		awaitTrue(() -> shop.arrivals("/orders") == 200 && service.parkedDuplicates() == 199);
		shop.openGate();

		List<HttpResponse<String>> answered = join(responses);
		assertThat(shop.runs("/orders")).isEqualTo(1);
		assertThat(answered).extracting(HttpResponse::statusCode).containsOnly(201);
		assertThat(answered).extracting(HttpResponse::body).containsOnly("{\"id\":1,\"customer\":\"alice\"}");
		assertThat(answered).allSatisfy((response) -> {
			assertThat(response.headers().firstValue("Location")).hasValue("/orders/1");
			assertThat(response.headers().firstValue("Content-Type")).hasValue("application/json");
		});
		assertThat(answered).filteredOn((response) -> response.headers().firstValue("Idempotency-Replayed").isPresent())
			.hasSize(199);
		assertThat(rows.row("", Idempotent.DEFAULT_POOL, key)).containsEntry("status", "completed")
			.containsEntry("response_status", 201);
	}

	@Test
	void twoHundredConcurrentRequestsWithOneKeyUnderRejectRunOnceAndTheOthersGet409() throws Exception {
		String key = newKey();
		shop.closeGate();
		List<CompletableFuture<HttpResponse<String>>> responses = new ArrayList<>();
		for (int i = 0; i < 200; i++) {
			responses.add(sendAsync("/orders/rejecting", key, "{\"customer\":\"bob\"}"));
		}
		// the duplicates are answered while the first request is still in its handler
		awaitTrue(() -> responses.stream().filter(CompletableFuture::isDone).count() == 199);
		assertThat(shop.runs("/orders/rejecting")).isEqualTo(1);
		shop.openGate();

		List<HttpResponse<String>> answered = join(responses);
		assertThat(answered).extracting(HttpResponse::statusCode).containsOnlyOnce(201).containsOnly(201, 409);
		assertThat(answered).filteredOn((response) -> response.statusCode() == 409)
			.hasSize(199)
			.allSatisfy((response) -> {
				assertThat(response.headers().firstValue("Content-Type")).hasValue("application/problem+json");
				assertThat(response.body()).contains("\"status\":409").contains(key).contains("REJECT");
			});
		assertThat(shop.runs("/orders/rejecting")).isEqualTo(1);
	}

	@Test
	void aReservationWhoseOwnerCrashedIsSweptAfterItsTtlAndTheRetryRunsTheHandlerOnce() throws Exception {
		String key = newKey();
		String body = "{\"customer\":\"carol\"}";
		// an earlier attempt of this very request reserved the key, then its instance
		// died
		ReserveOutcome crashed = service.reserve(new IdempotentRequest("", Idempotent.DEFAULT_POOL, key,
				RequestFingerprinter.fingerprint("POST", "/orders", body.getBytes(StandardCharsets.UTF_8))));
		assertThat(crashed).isInstanceOf(ReserveOutcome.Reserved.class);

		// the client's retry waits for the dead owner
		CompletableFuture<HttpResponse<String>> retry = sendAsync("/orders", key, body);
		awaitTrue(() -> service.parkedDuplicates() == 1);
		assertThat(rows.status("", Idempotent.DEFAULT_POOL, key)).isEqualTo("pending");

		// pending-ttl (5 minutes) passes; the sweeper releases the key and the parked
		// retry takes it over
		rows.age("", Idempotent.DEFAULT_POOL, key, "5 minutes 1 second");
		app.getBean("ductorSweeperWorker", PeriodicWorker.class).runRound();
		HttpResponse<String> answered = retry.get(30, TimeUnit.SECONDS);
		assertThat(answered.statusCode()).isEqualTo(201);
		assertThat(answered.headers().firstValue("Idempotency-Replayed")).isEmpty();
		assertThat(shop.runs("/orders")).isEqualTo(1);

		HttpResponse<String> again = send("/orders", key, body);
		assertThat(again.headers().firstValue("Idempotency-Replayed")).hasValue("true");
		assertThat(again.body()).isEqualTo(answered.body());
		assertThat(shop.runs("/orders")).isEqualTo(1);
	}

	@Test
	void aCompletedKeyReplaysBeforeItsTtlAndRunsAgainAfterIt() throws Exception {
		String key = newKey();
		HttpResponse<String> first = send("/orders", key, "{\"customer\":\"dave\"}");
		HttpResponse<String> replay = send("/orders", key, "{\"customer\":\"dave\"}");
		assertThat(replay.statusCode()).isEqualTo(201);
		assertThat(replay.body()).isEqualTo(first.body());
		assertThat(replay.headers().firstValue("Idempotency-Replayed")).hasValue("true");
		assertThat(shop.runs("/orders")).isEqualTo(1);
		assertThat(rows.row("", Idempotent.DEFAULT_POOL, key)).containsEntry("ttl_millis",
				Duration.ofHours(24).toMillis());

		rows.age("", Idempotent.DEFAULT_POOL, key, "24 hours 1 second");
		HttpResponse<String> after = send("/orders", key, "{\"customer\":\"dave\"}");
		assertThat(after.statusCode()).isEqualTo(201);
		assertThat(after.headers().firstValue("Idempotency-Replayed")).isEmpty();
		assertThat(after.body()).isEqualTo("{\"id\":2,\"customer\":\"dave\"}");
		assertThat(shop.runs("/orders")).isEqualTo(2);
	}

	@Test
	void twoTenantsUsingTheSameKeyNeverSeeEachOthersResponse() throws Exception {
		String key = newKey();
		HttpResponse<String> a = send("/orders", key, "{\"customer\":\"same\"}", "X-Tenant", "tenant-a");
		HttpResponse<String> b = send("/orders", key, "{\"customer\":\"same\"}", "X-Tenant", "tenant-b");
		assertThat(a.headers().firstValue("Idempotency-Replayed")).isEmpty();
		assertThat(b.headers().firstValue("Idempotency-Replayed")).isEmpty();
		assertThat(a.body()).isNotEqualTo(b.body());
		assertThat(send("/orders", key, "{\"customer\":\"same\"}", "X-Tenant", "tenant-a").body()).isEqualTo(a.body());
		assertThat(send("/orders", key, "{\"customer\":\"same\"}", "X-Tenant", "tenant-b").body()).isEqualTo(b.body());
		assertThat(shop.runs("/orders")).isEqualTo(2);
		assertThat(rows.count("idempotency_key = ?", key)).isEqualTo(2);
	}

	@Test
	void serverErrorsAndExceptionsReleaseTheKeyAndClientErrorsAreStored() throws Exception {
		String key = newKey();
		shop.failNext(2);
		// one transaction: the reservation rolled back with the handler, no trace of the
		// key
		assertThat(send("/orders/flaky", key, "{}").statusCode()).isEqualTo(500);
		assertThat(rows.row("", Idempotent.DEFAULT_POOL, key)).isEmpty();
		assertThat(send("/orders/flaky", key, "{\"boom\":true}").statusCode()).isEqualTo(500);
		assertThat(rows.row("", Idempotent.DEFAULT_POOL, key)).isEmpty();
		HttpResponse<String> ok = send("/orders/flaky", key, "{}");
		assertThat(ok.statusCode()).isEqualTo(200);
		assertThat(send("/orders/flaky", key, "{}").headers().firstValue("Idempotency-Replayed")).hasValue("true");
		assertThat(shop.runs("/orders/flaky")).isEqualTo(3);

		String invalid = newKey();
		HttpResponse<String> rejected = send("/orders", invalid, "{\"customer\":\"\"}");
		assertThat(rejected.statusCode()).isEqualTo(400);
		HttpResponse<String> replayed = send("/orders", invalid, "{\"customer\":\"\"}");
		assertThat(replayed.statusCode()).isEqualTo(400);
		assertThat(replayed.body()).isEqualTo(rejected.body());
		assertThat(replayed.headers().firstValue("Idempotency-Replayed")).hasValue("true");
		assertThat(shop.runs("/orders/invalid")).isEqualTo(1);
	}

	@Test
	void badKeysAreAnswered400AndAKeyReusedWithAnotherBody422AllAsProblemJson() throws Exception {
		long rowsBefore = rows.count("true");
		assertProblem(send("/orders", null, "{\"customer\":\"erin\"}"), 400,
				"This request requires an idempotency key in the Idempotency-Key header");
		assertProblem(send("/orders", "", "{\"customer\":\"erin\"}"), 400, "must not be empty");
		assertProblem(send("/orders", "k".repeat(256), "{\"customer\":\"erin\"}"), 400,
				"at most 255 characters but has 256");
		assertProblem(send("/orders", "\"has space\"", "{\"customer\":\"erin\"}"), 400,
				"visible ASCII characters (0x21-0x7E) but has U+0020 at index 3");
		assertProblem(send("/orders", "\"esc\\\"aped\"", "{\"customer\":\"erin\"}"), 400,
				"must not contain escaped characters");
		assertThat(shop.runs("/orders")).isZero();
		assertThat(rows.count("true")).isEqualTo(rowsBefore);

		String key = newKey();
		send("/orders", key, "{\"customer\":\"erin\"}");
		assertProblem(send("/orders", key, "{\"customer\":\"mallory\"}"), 422,
				"was already used for a different request");
		// the quoted sf-string form of the draft names the same key
		HttpResponse<String> quoted = send("/orders", "\"" + key + "\"", "{\"customer\":\"erin\"}");
		assertThat(quoted.headers().firstValue("Idempotency-Replayed")).hasValue("true");
		assertThat(shop.runs("/orders")).isEqualTo(1);
	}

	@Test
	void formPostsAreFingerprintedByTheirParametersSoADifferentFormUnderTheSameKeyIs422() throws Exception {
		String key = newKey();
		assertThat(sendForm(key, "a=x%2C%20y").statusCode()).isEqualTo(200);
		assertThat(sendForm(key, "a=x%2C%20y").headers().firstValue("Idempotency-Replayed")).hasValue("true");
		// one value "x, y" against two values "x" and "y"; a name=value boundary moved
		assertProblem(sendForm(key, "a=x&a=y"), 422, "was already used for a different request");
		String other = newKey();
		sendForm(other, "a=x%5D%26b%3D%5By");
		assertProblem(sendForm(other, "a=x&b=y"), 422, "was already used for a different request");
		assertThat(shop.runs("/orders/form")).isEqualTo(2);
	}

	@Test
	void whereTheKeyIsOptionalAMissingOrEmptyKeyOptsOut() throws Exception {
		assertThat(send("/orders/optional", null, "{}").statusCode()).isEqualTo(200);
		assertThat(send("/orders/optional", "", "{}").statusCode()).isEqualTo(200);
		assertThat(send("/orders/optional", "", "{}").headers().firstValue("Idempotency-Replayed")).isEmpty();
		assertThat(shop.runs("/orders/optional")).isEqualTo(3);
		assertThat(rows.count("pool_id = 'optional-pool'")).isZero();
		String key = newKey();
		send("/orders/optional", key, "{}");
		send("/orders/optional", key, "{}");
		assertThat(shop.runs("/orders/optional")).isEqualTo(4);
		assertThat(rows.count("pool_id = 'optional-pool'")).isOne();
	}

	private static void assertProblem(HttpResponse<String> response, int status, String detail) {
		assertThat(response.statusCode()).isEqualTo(status);
		assertThat(response.headers().firstValue("Content-Type")).hasValue("application/problem+json");
		assertThat(response.body()).contains("\"status\":" + status).contains(detail);
	}

	static String newKey() {
		return UUID.randomUUID().toString();
	}

	static HttpResponse<String> send(String path, String key, String body, String... headers) throws Exception {
		return http.send(request(path, key, body, headers), HttpResponse.BodyHandlers.ofString());
	}

	static HttpResponse<String> sendForm(String key, String form) throws Exception {
		return http.send(HttpRequest.newBuilder(URI.create(base + "/orders/form"))
			.timeout(Duration.ofSeconds(90))
			.header("Content-Type", "application/x-www-form-urlencoded")
			.header("Idempotency-Key", key)
			.POST(HttpRequest.BodyPublishers.ofString(form))
			.build(), HttpResponse.BodyHandlers.ofString());
	}

	static CompletableFuture<HttpResponse<String>> sendAsync(String path, String key, String body) {
		return http.sendAsync(request(path, key, body), HttpResponse.BodyHandlers.ofString());
	}

	static HttpRequest request(String path, String key, String body, String... headers) {
		HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(base + path))
			.timeout(Duration.ofSeconds(90))
			.header("Content-Type", "application/json")
			.POST(HttpRequest.BodyPublishers.ofString(body));
		if (key != null) {
			request.header("Idempotency-Key", key);
		}
		if (headers.length > 0) {
			request.headers(headers);
		}
		return request.build();
	}

	static List<HttpResponse<String>> join(List<CompletableFuture<HttpResponse<String>>> responses) throws Exception {
		List<HttpResponse<String>> answered = new ArrayList<>();
		for (CompletableFuture<HttpResponse<String>> response : responses) {
			answered.add(response.get(90, TimeUnit.SECONDS));
		}
		return answered;
	}

	static void awaitTrue(java.util.function.BooleanSupplier condition) {
		org.awaitility.Awaitility.await()
			.atMost(java.time.Duration.ofSeconds(60))
			.pollInterval(java.time.Duration.ofMillis(5))
			.until(condition::getAsBoolean);
	}

	/**
	 * The test shop: counts arrivals and handler runs per path, and can hold handlers at
	 * a gate.
	 */
	static final class Shop {

		private final Map<String, AtomicInteger> arrivals = new ConcurrentHashMap<>();

		private final Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();

		private final AtomicInteger failures = new AtomicInteger();

		private volatile CountDownLatch gate = new CountDownLatch(0);

		void reset() {
			this.arrivals.clear();
			this.runs.clear();
			this.failures.set(0);
			this.gate = new CountDownLatch(0);
		}

		void closeGate() {
			this.gate = new CountDownLatch(1);
		}

		void openGate() {
			this.gate.countDown();
		}

		void failNext(int times) {
			this.failures.set(times);
		}

		int arrivals(String path) {
			return this.arrivals.computeIfAbsent(path, (p) -> new AtomicInteger()).get();
		}

		int runs(String path) {
			return this.runs.computeIfAbsent(path, (p) -> new AtomicInteger()).get();
		}

		int run(String path) {
			int run = this.runs.computeIfAbsent(path, (p) -> new AtomicInteger()).incrementAndGet();
			try {
				if (!this.gate.await(60, TimeUnit.SECONDS)) {
					throw new IllegalStateException("gate never opened");
				}
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new IllegalStateException(ex);
			}
			return run;
		}

	}

	@RestController
	static class OrdersController {

		private final Shop shop;

		OrdersController(Shop shop) {
			this.shop = shop;
		}

		@PostMapping("/orders")
		@Idempotent
		ResponseEntity<Map<String, Object>> create(@RequestBody Map<String, Object> order) {
			if ("".equals(order.get("customer"))) {
				this.shop.run("/orders/invalid");
				return ResponseEntity.badRequest().body(Map.of("error", "customer is required"));
			}
			int id = this.shop.run("/orders");
			Map<String, Object> created = new java.util.LinkedHashMap<>();
			created.put("id", id);
			created.put("customer", order.get("customer"));
			return ResponseEntity.created(URI.create("/orders/" + id)).body(created);
		}

		@PostMapping("/orders/rejecting")
		@Idempotent(duplicatePolicy = DuplicatePolicy.REJECT)
		ResponseEntity<Map<String, Object>> createOrReject(@RequestBody Map<String, Object> order) {
			int id = this.shop.run("/orders/rejecting");
			return ResponseEntity.created(URI.create("/orders/" + id)).body(Map.of("id", id));
		}

		@PostMapping("/orders/flaky")
		@Idempotent
		ResponseEntity<String> flaky(@RequestBody Map<String, Object> order) {
			this.shop.run("/orders/flaky");
			if (this.shop.failures.getAndDecrement() > 0) {
				if (order.containsKey("boom")) {
					throw new IllegalStateException("boom");
				}
				return ResponseEntity.internalServerError().body("try again");
			}
			return ResponseEntity.ok("done");
		}

		@PostMapping(path = "/orders/form", consumes = "application/x-www-form-urlencoded")
		@Idempotent
		String form(
				@org.springframework.web.bind.annotation.RequestParam org.springframework.util.MultiValueMap<String, String> fields) {
			return "run " + this.shop.run("/orders/form") + " of " + fields;
		}

		@PostMapping("/orders/optional")
		@Idempotent(required = false, pool = "optional-pool")
		String optional(@RequestBody String body) {
			return "run " + this.shop.run("/orders/optional");
		}

	}

	@SpringBootConfiguration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	@Import(OrdersController.class)
	static class ShopApplication {

		@Bean
		Shop shop() {
			return new Shop();
		}

		@Bean
		TenantScopeResolver tenantFromHeader() {
			return (request) -> (request.getHeader("X-Tenant") != null) ? request.getHeader("X-Tenant") : "";
		}

		@Bean
		OncePerRequestFilter arrivalCounter(Shop shop) {
			class ArrivalCounter extends OncePerRequestFilter implements Ordered {

				@Override
				protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response,
						FilterChain chain) throws ServletException, IOException {
					shop.arrivals.computeIfAbsent(request.getRequestURI(), (p) -> new AtomicInteger())
						.incrementAndGet();
					chain.doFilter(request, response);
				}

				@Override
				public int getOrder() {
					return Ordered.HIGHEST_PRECEDENCE;
				}

			}
			return new ArrivalCounter();
		}

	}

}
