package io.ductor.idempotency.web;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpResponse;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.Cookie;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.bind.annotation.RestControllerAdvice;
import org.springframework.web.context.request.async.DeferredResult;
import org.springframework.web.server.ResponseStatusException;

import io.ductor.idempotency.IdempotencyRows;
import io.ductor.test.PostgresExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Only the handler's own answer, when the handler did not fail, is a decision, over real
 * HTTP on a real PostgreSQL: an exception the handler threw is an exception whatever
 * answers it (an {@code @ExceptionHandler} of a {@code @ControllerAdvice}, Spring MVC's
 * {@code ProblemDetail} answer), so its work is rolled back (or its two-phase key
 * released) and its answer is sent but never replayed, even a success; and what filters
 * before Ductor's wrote into the response (a cookie, a session, a header) is theirs, not
 * the handler's: it neither refuses the answer nor is stored with it.
 */
class HandlersOwnAnswerHttpTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	static ConfigurableApplicationContext app;

	static Client client;

	static Gate gate;

	static IdempotencyRows rows;

	static JdbcClient jdbc;

	@BeforeAll
	static void start() {
		jdbc = JdbcClient.create(postgres.dataSource());
		jdbc.sql("CREATE TABLE stock_hold (hold_key text NOT NULL)").update();
		app = new SpringApplicationBuilder(StockApplication.class).properties(postgres.springProperties())
			.properties("server.port=0", "spring.mvc.problemdetails.enabled=true",
					"ductor.idempotency.sweeper.interval=1h", "ductor.retention.enabled=false",
					"spring.flyway.enabled=false")
			.run();
		client = new Client(app);
		gate = app.getBean(Gate.class);
		rows = new IdempotencyRows(postgres.dataSource());
	}

	@AfterAll
	static void stop() {
		app.close();
	}

	@Test
	void anExceptionAnsweredByAnExceptionHandlerRollsTheWorkBackAndIsNeverReplayed() throws Exception {
		String key = newKey();
		HttpResponse<String> soldOut = client.post("/stock", key, knownVisitor("X-Sold-Out", "true"));
		assertThat(soldOut.statusCode()).isEqualTo(409);
		assertThat(soldOut.body()).isEqualTo("sold out");
		// the handler wrote its hold, then threw: the hold is not kept, nor the answer
		assertThat(holds(key)).isZero();
		assertThat(rows.row("", Idempotent.DEFAULT_POOL, key)).isEmpty();

		HttpResponse<String> retried = client.post("/stock", key, knownVisitor());
		assertThat(retried.statusCode()).isEqualTo(201);
		assertThat(retried.headers().firstValue("Idempotency-Replayed")).isEmpty();
		assertThat(gate.runs(key)).isEqualTo(2);
		assertThat(holds(key)).isOne();
		assertThat(client.post("/stock", key, knownVisitor()).headers().firstValue("Idempotency-Replayed"))
			.hasValue("true");
	}

	@Test
	void aProblemDetailSpringMvcWritesForAThrownResponseStatusExceptionIsNeverStored() throws Exception {
		String key = newKey();
		HttpResponse<String> refused = client.post("/stock/checked", key, knownVisitor());
		assertThat(refused.statusCode()).isEqualTo(422);
		assertThat(refused.headers().firstValue("Content-Type")).hasValue("application/problem+json");
		assertThat(refused.body()).contains("over the limit");
		assertThat(holds(key)).isZero();
		assertThat(rows.row("", Idempotent.DEFAULT_POOL, key)).isEmpty();
		HttpResponse<String> again = client.post("/stock/checked", key, knownVisitor());
		assertThat(again.headers().firstValue("Idempotency-Replayed")).isEmpty();
		assertThat(gate.runs(key)).isEqualTo(2);
	}

	@Test
	void inTwoPhaseModeASuccessAnsweredForAnExceptionReleasesTheKey() throws Exception {
		String key = newKey();
		// the warehouse's own transaction rolled back; the advice answers 202
		HttpResponse<String> queued = client.post("/stock/two-phase", key, knownVisitor("X-Busy", "true"));
		assertThat(queued.statusCode()).isEqualTo(202);
		assertThat(queued.body()).isEqualTo("queued");
		assertThat(holds(key)).isZero();
		assertThat(rows.status("", Idempotent.DEFAULT_POOL, key)).isEqualTo("failed_before_commit");

		HttpResponse<String> retried = client.post("/stock/two-phase", key, knownVisitor());
		assertThat(retried.statusCode()).isEqualTo(201);
		assertThat(retried.headers().firstValue("Idempotency-Replayed")).isEmpty();
		assertThat(holds(key)).isOne();
		assertThat(rows.status("", Idempotent.DEFAULT_POOL, key)).isEqualTo("completed");
	}

	@Test
	void inTwoPhaseModeAnAsynchronousFailureAnsweredByAnExceptionHandlerReleasesTheKey() throws Exception {
		String key = newKey();
		HttpResponse<String> soldOut = client.post("/stock/deferred", key, knownVisitor("X-Sold-Out", "true"));
		assertThat(soldOut.statusCode()).isEqualTo(409);
		assertThat(soldOut.body()).isEqualTo("sold out");
		assertThat(rows.status("", Idempotent.DEFAULT_POOL, key)).isEqualTo("failed_before_commit");
		HttpResponse<String> retried = client.post("/stock/deferred", key, knownVisitor());
		assertThat(retried.statusCode()).isEqualTo(200);
		assertThat(retried.headers().firstValue("Idempotency-Replayed")).isEmpty();
		assertThat(rows.status("", Idempotent.DEFAULT_POOL, key)).isEqualTo("completed");
	}

	@Test
	void aCookieAndHeadersFiltersBeforeDuctorSetAreNeitherRefusedNorStored() throws Exception {
		for (String path : new String[] { "/stock", "/stock/two-phase" }) {
			String key = newKey();
			HttpResponse<String> first = client.post(path, key);
			assertThat(first.statusCode()).as(path).isEqualTo(201);
			assertThat(first.headers().allValues("Set-Cookie")).as(path)
				.singleElement()
				.satisfies((cookie) -> assertThat(cookie).startsWith("visitor="));
			assertThat(first.headers().allValues("Content-Language")).as(path).containsExactly("de");
			assertThat(rows.status("", Idempotent.DEFAULT_POOL, key)).as(path).isEqualTo("completed");
			assertThat(storedHeaders(key)).as(path).doesNotContainIgnoringCase("visitor", "content-language");

			// the filters run again for the replay, and add what they add once
			HttpResponse<String> replay = client.post(path, key);
			assertThat(replay.headers().firstValue("Idempotency-Replayed")).as(path).hasValue("true");
			assertThat(replay.body()).isEqualTo(first.body());
			assertThat(replay.headers().allValues("Set-Cookie")).as(path).hasSize(1);
			assertThat(replay.headers().allValues("Content-Language")).as(path).containsExactly("de");
			assertThat(gate.runs(key)).as(path).isOne();
		}
	}

	@Test
	void aSessionAFilterBeforeDuctorCreatesDoesNotRefuseTheHandlersSuccess() throws Exception {
		String key = newKey();
		HttpResponse<String> first = client.post("/stock", key, "X-Session", "true");
		assertThat(first.statusCode()).isEqualTo(201);
		assertThat(first.headers().allValues("Set-Cookie")).anyMatch((cookie) -> cookie.startsWith("JSESSIONID="));
		assertThat(holds(key)).isOne();
		assertThat(rows.status("", Idempotent.DEFAULT_POOL, key)).isEqualTo("completed");

		// a session the handler creates is the handler's: refused, as the docs say
		String own = newKey();
		HttpResponse<String> refused = client.post("/stock/session", own);
		assertThat(refused.statusCode()).isEqualTo(500);
		assertThat(refused.body()).contains("Set-Cookie");
		assertThat(holds(own)).isZero();
		assertThat(rows.row("", Idempotent.DEFAULT_POOL, own)).isEmpty();
	}

	@Test
	void aSuccessTheContainerRendersIsNeverSentForWorkThatWasRolledBack() throws Exception {
		// @ResponseStatus with a reason answers with sendError, whose page is rendered
		// after Ductor's filter: it cannot be stored, so the decision rolls back, and a
		// success must not claim it
		String key = newKey();
		HttpResponse<String> answered = client.post("/stock/queued", key, knownVisitor());
		assertThat(holds(key) == 1 || answered.statusCode() >= 400)
			.as("a %s answered for %s hold(s)", answered.statusCode(), holds(key))
			.isTrue();
		assertThat(answered.statusCode()).isEqualTo(500);
		assertThat(answered.headers().firstValue("Content-Type")).hasValue("application/problem+json");
		assertThat(answered.body()).contains("@ResponseStatus").contains("TWO_PHASE");
		assertThat(holds(key)).isZero();
		assertThat(rows.row("", Idempotent.DEFAULT_POOL, key)).isEmpty();
	}

	static String storedHeaders(String key) {
		return jdbc.sql("""
				SELECT response_headers::text FROM eec_routing_idempotency
				WHERE tenant_scope = '' AND pool_id = ? AND idempotency_key = ?""")
			.params(Idempotent.DEFAULT_POOL, key)
			.query(String.class)
			.single();
	}

	static long holds(String key) {
		return jdbc.sql("SELECT count(*) FROM stock_hold WHERE hold_key = ?").param(key).query(Long.class).single();
	}

	/**
	 * @return the headers, and the cookie of a visitor the filter before Ductor's knows
	 * already: it sets no cookie of its own
	 */
	static String[] knownVisitor(String... headers) {
		String[] all = java.util.Arrays.copyOf(headers, headers.length + 2);
		all[headers.length] = "Cookie";
		all[headers.length + 1] = "visitor=v1";
		return all;
	}

	static String newKey() {
		return UUID.randomUUID().toString();
	}

	static final class SoldOutException extends RuntimeException {

		SoldOutException() {
			super("sold out");
		}

	}

	static final class BusyException extends RuntimeException {

		BusyException() {
			super("busy");
		}

	}

	@RestControllerAdvice
	static class StockAdvice {

		@ExceptionHandler
		ResponseEntity<String> soldOut(SoldOutException ex) {
			return ResponseEntity.status(HttpStatus.CONFLICT).body(ex.getMessage());
		}

		@ExceptionHandler
		ResponseEntity<String> busy(BusyException ex) {
			return ResponseEntity.status(HttpStatus.ACCEPTED).body("queued");
		}

	}

	@RestController
	static class StockController {

		private final Gate gate;

		private final JdbcTemplate jdbc;

		private final Warehouse warehouse;

		private final ExecutorService executor = Executors.newSingleThreadExecutor();

		StockController(Gate gate, JdbcTemplate jdbc, Warehouse warehouse) {
			this.gate = gate;
			this.jdbc = jdbc;
			this.warehouse = warehouse;
		}

		@PostMapping("/stock")
		@Idempotent
		ResponseEntity<String> hold(@RequestHeader("Idempotency-Key") String key,
				@RequestHeader(name = "X-Sold-Out", required = false) String soldOut) {
			this.gate.pass(key);
			this.jdbc.update("INSERT INTO stock_hold VALUES (?)", key);
			if (soldOut != null) {
				throw new SoldOutException();
			}
			return ResponseEntity.created(URI.create("/stock/" + key)).body("held " + key);
		}

		@PostMapping("/stock/checked")
		@Idempotent
		String checked(@RequestHeader("Idempotency-Key") String key) {
			this.gate.pass(key);
			this.jdbc.update("INSERT INTO stock_hold VALUES (?)", key);
			throw new ResponseStatusException(HttpStatus.UNPROCESSABLE_CONTENT, "over the limit");
		}

		@PostMapping("/stock/queued")
		@Idempotent
		@org.springframework.web.bind.annotation.ResponseStatus(code = HttpStatus.ACCEPTED,
				reason = "queued for shipping")
		void queued(@RequestHeader("Idempotency-Key") String key) {
			this.gate.pass(key);
			this.jdbc.update("INSERT INTO stock_hold VALUES (?)", key);
		}

		@PostMapping("/stock/session")
		@Idempotent
		String session(@RequestHeader("Idempotency-Key") String key, HttpServletRequest request) {
			this.gate.pass(key);
			this.jdbc.update("INSERT INTO stock_hold VALUES (?)", key);
			request.getSession(true);
			return "held " + key;
		}

		@PostMapping("/stock/two-phase")
		@Idempotent(mode = IdempotencyMode.TWO_PHASE)
		ResponseEntity<String> holdTwoPhase(@RequestHeader("Idempotency-Key") String key,
				@RequestHeader(name = "X-Busy", required = false) String busy) {
			this.gate.pass(key);
			this.warehouse.hold(key, busy != null);
			return ResponseEntity.created(URI.create("/stock/" + key)).body("held " + key);
		}

		@PostMapping("/stock/deferred")
		@Idempotent(mode = IdempotencyMode.TWO_PHASE)
		DeferredResult<String> deferred(@RequestHeader("Idempotency-Key") String key,
				@RequestHeader(name = "X-Sold-Out", required = false) String soldOut) {
			DeferredResult<String> result = new DeferredResult<>();
			this.executor.execute(() -> {
				if (soldOut != null) {
					result.setErrorResult(new SoldOutException());
				}
				else {
					result.setResult("held " + key);
				}
			});
			return result;
		}

	}

	/** The application's own transactional service. */
	static class Warehouse {

		private final JdbcTemplate jdbc;

		Warehouse(JdbcTemplate jdbc) {
			this.jdbc = jdbc;
		}

		@Transactional
		public void hold(String key, boolean busy) {
			this.jdbc.update("INSERT INTO stock_hold VALUES (?)", key);
			if (busy) {
				throw new BusyException();
			}
		}

	}

	/**
	 * A filter before Ductor's, as session, security or locale filters are: it gives a
	 * new visitor a cookie, names the content's language, and opens a session when asked.
	 */
	static class VisitorFilter implements Filter {

		@Override
		public void doFilter(jakarta.servlet.ServletRequest servletRequest,
				jakarta.servlet.ServletResponse servletResponse, FilterChain chain)
				throws IOException, ServletException {
			HttpServletRequest request = (HttpServletRequest) servletRequest;
			HttpServletResponse response = (HttpServletResponse) servletResponse;
			if (request.getCookies() == null) {
				response.addCookie(new Cookie("visitor", UUID.randomUUID().toString()));
			}
			response.setHeader("Content-Language", "de");
			if (request.getHeader("X-Session") != null) {
				request.getSession(true);
			}
			chain.doFilter(request, response);
		}

	}

	@SpringBootConfiguration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	@Import({ StockController.class, StockAdvice.class, Warehouse.class })
	static class StockApplication {

		@Bean
		Gate gate() {
			return new Gate();
		}

		@Bean
		FilterRegistrationBean<VisitorFilter> visitorFilter() {
			FilterRegistrationBean<VisitorFilter> registration = new FilterRegistrationBean<>(new VisitorFilter());
			registration.setOrder(-50);
			return registration;
		}

	}

}
