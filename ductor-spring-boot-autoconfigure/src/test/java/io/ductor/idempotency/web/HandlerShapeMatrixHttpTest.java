package io.ductor.idempotency.web;

import java.io.IOException;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.stream.Stream;

import jakarta.servlet.http.HttpServletResponse;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.http.HttpEntity;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.context.request.async.DeferredResult;
import org.springframework.web.context.request.async.WebAsyncTask;
import org.springframework.web.servlet.mvc.method.annotation.ResponseBodyEmitter;
import org.springframework.web.servlet.mvc.method.annotation.SseEmitter;
import org.springframework.web.servlet.mvc.method.annotation.StreamingResponseBody;

import io.ductor.idempotency.IdempotencyRows;
import io.ductor.test.PostgresExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every return type Spring MVC supports, in both modes, over real HTTP on a real
 * PostgreSQL, each with a normal answer, an exception after the handler's write, and a
 * connection lost before that write committed: one decision per key, and the stored
 * answer is the first answer sent (every replay equal to it). The shapes Spring MVC
 * answers asynchronously work in {@code TWO_PHASE} (stored once the asynchronous
 * processing has ended); {@code ONE_TRANSACTION} refuses them at start-up
 * ({@code AsyncShapesAtStartUpTest}) and, when a handler's declared type hides them, when
 * it answers: a 500 problem, nothing kept. One application serves the whole matrix.
 */
class HandlerShapeMatrixHttpTest {

	/** Answered synchronously: both modes. */
	static final List<String> SYNCHRONOUS = List.of("string", "json", "entity", "http-entity", "servlet", "object");

	/** Answered asynchronously: two-phase only. */
	static final List<String> ASYNCHRONOUS = List.of("streaming", "entity-streaming", "sse", "emitter", "deferred",
			"callable", "future", "stage", "web-async-task", "object-future", "object-callable");

	/**
	 * How long an asynchronous answer may take (also Spring MVC's default, for a
	 * {@code Callable}): far longer than any answer needs on a loaded machine, so that
	 * only the shapes made to time out ever do.
	 */
	static final long ANSWER_TIMEOUT = 120_000L;

	enum Scenario {

		/** The first request decides. */
		NORMAL,

		/** The handler's work writes its decision and throws; then the retry decides. */
		EXCEPTION,

		/**
		 * The connection of the handler's work dies after the write, before its commit;
		 * then the retry decides.
		 */
		CRASH_BEFORE_COMMIT

	}

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
		jdbc.sql("CREATE TABLE decision (decision_key text NOT NULL, run integer NOT NULL)").update();
		app = new SpringApplicationBuilder(ShapesApplication.class).properties(postgres.springProperties())
			.properties("server.port=0", "ductor.idempotency.sweeper.interval=1h", "ductor.retention.enabled=false",
					"spring.flyway.enabled=false", "spring.mvc.async.request-timeout=" + ANSWER_TIMEOUT + "ms")
			.run();
		client = new Client(app);
		gate = app.getBean(Gate.class);
		rows = new IdempotencyRows(postgres.dataSource());
	}

	@AfterAll
	static void stop() {
		app.close();
	}

	static Stream<Arguments> cells() {
		List<Arguments> cells = new ArrayList<>();
		for (Scenario scenario : Scenario.values()) {
			SYNCHRONOUS.forEach((shape) -> cells.add(Arguments.of("one-transaction", shape, scenario)));
			SYNCHRONOUS.forEach((shape) -> cells.add(Arguments.of("two-phase", shape, scenario)));
			ASYNCHRONOUS.forEach((shape) -> cells.add(Arguments.of("two-phase", shape, scenario)));
		}
		return cells.stream();
	}

	@ParameterizedTest(name = "{0} {1} {2}")
	@MethodSource("cells")
	void oneDecisionPerKeyAndTheStoredAnswerIsTheFirstAnswerSent(String mode, String shape, Scenario scenario)
			throws Exception {
		String key = UUID.randomUUID().toString();
		String path = "/" + mode + "/" + shape;
		if (scenario == Scenario.EXCEPTION) {
			HttpResponse<String> failed = client.post(path, key, "X-Fail", "throw");
			assertThat(failed.statusCode()).as(failed.body()).isEqualTo(500);
			assertThat(decisions(key)).isZero();
			assertThat(rows.status("", Idempotent.DEFAULT_POOL, key)).isNotEqualTo("completed");
		}
		if (scenario == Scenario.CRASH_BEFORE_COMMIT) {
			gate.close(key);
			CompletableFuture<HttpResponse<String>> crashing = client.postAsync(path, key, "X-Fail", "crash");
			Gate.await("the work wrote its decision", () -> gate.runs(key) == 1);
			jdbc.sql("SELECT pg_terminate_backend(?)").param(gate.seen(key)).query(Boolean.class).single();
			gate.open(key);
			HttpResponse<String> failed = crashing.get(60, TimeUnit.SECONDS);
			assertThat(failed.statusCode()).as(failed.body()).isEqualTo(500);
			assertThat(decisions(key)).isZero();
			assertThat(rows.status("", Idempotent.DEFAULT_POOL, key)).isNotEqualTo("completed");
		}

		HttpResponse<String> first = client.post(path, key);
		HttpResponse<String> replay = client.post(path, key);

		assertThat(first.statusCode()).as(first.body()).isBetween(200, 299);
		assertThat(first.headers().firstValue("Idempotency-Replayed")).isEmpty();
		assertThat(first.body()).contains("decided " + key);
		assertThat(replay.headers().firstValue("Idempotency-Replayed")).hasValue("true");
		assertThat(replay.statusCode()).isEqualTo(first.statusCode());
		assertThat(replay.body()).isEqualTo(first.body());
		assertThat(replay.headers().firstValue("Content-Type")).isEqualTo(first.headers().firstValue("Content-Type"));
		assertThat(decisions(key)).as("decisions of " + key).isOne();
		Map<String, Object> stored = rows.row("", Idempotent.DEFAULT_POOL, key);
		assertThat(stored).containsEntry("status", "completed")
			.containsEntry("response_status", first.statusCode())
			.containsEntry("body", first.body());
	}

	@ParameterizedTest
	@ValueSource(strings = { "object-future", "object-callable" })
	void aOneTransactionHandlerAnsweringAsynchronouslyAtRunTimeIsRefusedAndKeepsNothing(String shape) throws Exception {
		String key = UUID.randomUUID().toString();
		for (int attempt = 0; attempt < 2; attempt++) {
			HttpResponse<String> refused = client.post("/one-transaction/" + shape, key);
			assertThat(refused.statusCode()).isEqualTo(500);
			assertThat(refused.headers().firstValue("Content-Type")).hasValue("application/problem+json");
			assertThat(refused.body()).contains("answered asynchronously").contains("TWO_PHASE");
		}
		assertThat(decisions(key)).isZero();
		assertThat(rows.row("", Idempotent.DEFAULT_POOL, key)).isEmpty();
	}

	@ParameterizedTest
	@ValueSource(strings = { "deferred-timeout", "callable-timeout" })
	void anAsynchronousAnswerThatTimesOutIsSentAsSpringAnswersItAndReleasesTheKey(String shape) throws Exception {
		String key = UUID.randomUUID().toString();
		// a late callable answers only after the test saw Spring MVC's timeout answer:
		// its
		// cancellation (an interrupt) must not let it answer first
		gate.close(key + " late");
		try {
			HttpResponse<String> timedOut = client.post("/two-phase/" + shape, key);
			assertThat(timedOut.statusCode()).isEqualTo(503);
			assertThat(rows.status("", Idempotent.DEFAULT_POOL, key)).isEqualTo("failed_before_commit");
			assertThat(client.post("/two-phase/" + shape, key).statusCode()).isEqualTo(503);
			assertThat(gate.runs(key)).as("the handler ran again after the release").isEqualTo(2);
		}
		finally {
			gate.open(key + " late");
		}
	}

	static long decisions(String key) {
		return jdbc.sql("SELECT count(*) FROM decision WHERE decision_key = ?").param(key).query(Long.class).single();
	}

	/**
	 * The handlers' work: writes a decision in a transaction (the decision's own in
	 * one-transaction mode), then fails as asked: {@code throw} after the write,
	 * {@code crash} holds at the gate with the connection's backend remembered, for the
	 * test to kill it before the commit.
	 */
	static class Work {

		private final JdbcTemplate jdbc;

		private final Gate gate;

		private final Map<String, AtomicInteger> runs = new java.util.concurrent.ConcurrentHashMap<>();

		Work(JdbcTemplate jdbc, Gate gate) {
			this.jdbc = jdbc;
			this.gate = gate;
		}

		@Transactional
		public String decide(String key, String fail) {
			int run = this.runs.computeIfAbsent(key, (k) -> new AtomicInteger()).incrementAndGet();
			this.jdbc.update("INSERT INTO decision VALUES (?, ?)", key, run);
			if ("crash".equals(fail)) {
				this.gate.saw(key, this.jdbc.queryForObject("SELECT pg_backend_pid()", Integer.class));
				this.gate.pass(key);
			}
			if ("throw".equals(fail)) {
				throw new IllegalStateException("the work failed after writing its decision");
			}
			return "decided " + key + " run " + run;
		}

	}

	/** The answers the shapes give around a decision, shared by both modes. */
	static final class Answers {

		private Answers() {
		}

		static Map<String, Object> json(String decision) {
			return Map.of("decision", decision, "amount", 1234567890.5);
		}

		static ResponseEntity<Map<String, Object>> entity(String key, String decision) {
			return ResponseEntity.status(201).header("Location", "/decisions/" + key).body(json(decision));
		}

		static void servlet(HttpServletResponse response, String decision) throws IOException {
			response.setStatus(202);
			response.setContentType("text/plain;charset=UTF-8");
			response.getWriter().write("written by the servlet API: " + decision);
		}

		static StreamingResponseBody streaming(Work work, String key, String fail) {
			return (out) -> {
				String decision = work.decide(key, fail);
				out.write(("part 1 of " + decision + "\n").getBytes(StandardCharsets.UTF_8));
				out.flush();
				out.write("part 2\n".getBytes(StandardCharsets.UTF_8));
			};
		}

		static <E extends ResponseBodyEmitter> E emit(E emitter, ExecutorService executor, Work work, String key,
				String fail, Consumer<String> send) {
			executor.execute(() -> {
				try {
					send.accept(work.decide(key, fail));
					emitter.complete();
				}
				catch (RuntimeException ex) {
					emitter.completeWithError(ex);
				}
			});
			return emitter;
		}

		static DeferredResult<String> deferred(ExecutorService executor, Work work, String key, String fail) {
			DeferredResult<String> result = new DeferredResult<>(ANSWER_TIMEOUT);
			executor.execute(() -> {
				try {
					result.setResult(work.decide(key, fail));
				}
				catch (RuntimeException ex) {
					result.setErrorResult(ex);
				}
			});
			return result;
		}

		static void send(ResponseBodyEmitter emitter, Object event) {
			try {
				if (emitter instanceof SseEmitter sse && event instanceof SseEmitter.SseEventBuilder builder) {
					sse.send(builder);
				}
				else {
					emitter.send(event);
				}
			}
			catch (IOException ex) {
				throw new IllegalStateException(ex);
			}
		}

	}

	@RestController
	@RequestMapping("/one-transaction")
	static class OneTransactionShapes {

		private final Work work;

		OneTransactionShapes(Work work) {
			this.work = work;
		}

		@PostMapping("/string")
		@Idempotent
		String string(@RequestHeader("Idempotency-Key") String key,
				@RequestHeader(name = "X-Fail", defaultValue = "") String fail) {
			return this.work.decide(key, fail);
		}

		@PostMapping("/json")
		@Idempotent
		Map<String, Object> json(@RequestHeader("Idempotency-Key") String key,
				@RequestHeader(name = "X-Fail", defaultValue = "") String fail) {
			return Answers.json(this.work.decide(key, fail));
		}

		@PostMapping("/entity")
		@Idempotent
		ResponseEntity<Map<String, Object>> entity(@RequestHeader("Idempotency-Key") String key,
				@RequestHeader(name = "X-Fail", defaultValue = "") String fail) {
			return Answers.entity(key, this.work.decide(key, fail));
		}

		@PostMapping("/http-entity")
		@Idempotent
		HttpEntity<String> httpEntity(@RequestHeader("Idempotency-Key") String key,
				@RequestHeader(name = "X-Fail", defaultValue = "") String fail) {
			return new HttpEntity<>(this.work.decide(key, fail));
		}

		@PostMapping("/servlet")
		@Idempotent
		void servlet(@RequestHeader("Idempotency-Key") String key,
				@RequestHeader(name = "X-Fail", defaultValue = "") String fail, HttpServletResponse response)
				throws IOException {
			Answers.servlet(response, this.work.decide(key, fail));
		}

		@PostMapping("/object")
		@Idempotent
		Object object(@RequestHeader("Idempotency-Key") String key,
				@RequestHeader(name = "X-Fail", defaultValue = "") String fail) {
			return ResponseEntity.accepted().body(this.work.decide(key, fail));
		}

		/** Decides in its transaction, then answers with a future its type hides. */
		@PostMapping("/object-future")
		@Idempotent
		Object objectFuture(@RequestHeader("Idempotency-Key") String key) {
			return CompletableFuture.completedFuture(this.work.decide(key, ""));
		}

		@PostMapping("/object-callable")
		@Idempotent
		Object objectCallable(@RequestHeader("Idempotency-Key") String key) {
			return (Callable<String>) () -> this.work.decide(key, "");
		}

	}

	@RestController
	@RequestMapping("/two-phase")
	static class TwoPhaseShapes {

		private final Work work;

		private final ExecutorService executor;

		private final Gate gate;

		TwoPhaseShapes(Work work, ExecutorService executor, Gate gate) {
			this.work = work;
			this.executor = executor;
			this.gate = gate;
		}

		@PostMapping("/string")
		@Idempotent(mode = IdempotencyMode.TWO_PHASE)
		String string(@RequestHeader("Idempotency-Key") String key,
				@RequestHeader(name = "X-Fail", defaultValue = "") String fail) {
			return this.work.decide(key, fail);
		}

		@PostMapping("/json")
		@Idempotent(mode = IdempotencyMode.TWO_PHASE)
		Map<String, Object> json(@RequestHeader("Idempotency-Key") String key,
				@RequestHeader(name = "X-Fail", defaultValue = "") String fail) {
			return Answers.json(this.work.decide(key, fail));
		}

		@PostMapping("/entity")
		@Idempotent(mode = IdempotencyMode.TWO_PHASE)
		ResponseEntity<Map<String, Object>> entity(@RequestHeader("Idempotency-Key") String key,
				@RequestHeader(name = "X-Fail", defaultValue = "") String fail) {
			return Answers.entity(key, this.work.decide(key, fail));
		}

		@PostMapping("/http-entity")
		@Idempotent(mode = IdempotencyMode.TWO_PHASE)
		HttpEntity<String> httpEntity(@RequestHeader("Idempotency-Key") String key,
				@RequestHeader(name = "X-Fail", defaultValue = "") String fail) {
			return new HttpEntity<>(this.work.decide(key, fail));
		}

		@PostMapping("/servlet")
		@Idempotent(mode = IdempotencyMode.TWO_PHASE)
		void servlet(@RequestHeader("Idempotency-Key") String key,
				@RequestHeader(name = "X-Fail", defaultValue = "") String fail, HttpServletResponse response)
				throws IOException {
			Answers.servlet(response, this.work.decide(key, fail));
		}

		@PostMapping("/object")
		@Idempotent(mode = IdempotencyMode.TWO_PHASE)
		Object object(@RequestHeader("Idempotency-Key") String key,
				@RequestHeader(name = "X-Fail", defaultValue = "") String fail) {
			return ResponseEntity.accepted().body(this.work.decide(key, fail));
		}

		@PostMapping("/streaming")
		@Idempotent(mode = IdempotencyMode.TWO_PHASE)
		StreamingResponseBody streaming(@RequestHeader("Idempotency-Key") String key,
				@RequestHeader(name = "X-Fail", defaultValue = "") String fail) {
			return Answers.streaming(this.work, key, fail);
		}

		@PostMapping("/entity-streaming")
		@Idempotent(mode = IdempotencyMode.TWO_PHASE)
		ResponseEntity<StreamingResponseBody> entityStreaming(@RequestHeader("Idempotency-Key") String key,
				@RequestHeader(name = "X-Fail", defaultValue = "") String fail) {
			return ResponseEntity.status(201)
				.contentType(MediaType.TEXT_PLAIN)
				.body(Answers.streaming(this.work, key, fail));
		}

		@PostMapping("/sse")
		@Idempotent(mode = IdempotencyMode.TWO_PHASE)
		SseEmitter sse(@RequestHeader("Idempotency-Key") String key,
				@RequestHeader(name = "X-Fail", defaultValue = "") String fail) {
			SseEmitter emitter = new SseEmitter(ANSWER_TIMEOUT);
			return Answers.emit(emitter, this.executor, this.work, key, fail, (decision) -> {
				Answers.send(emitter, SseEmitter.event().name("decided").data(decision));
				Answers.send(emitter, SseEmitter.event().name("done").data("done"));
			});
		}

		@PostMapping("/emitter")
		@Idempotent(mode = IdempotencyMode.TWO_PHASE)
		ResponseBodyEmitter emitter(@RequestHeader("Idempotency-Key") String key,
				@RequestHeader(name = "X-Fail", defaultValue = "") String fail) {
			ResponseBodyEmitter emitter = new ResponseBodyEmitter(ANSWER_TIMEOUT);
			return Answers.emit(emitter, this.executor, this.work, key, fail, (decision) -> {
				Answers.send(emitter, "line 1: " + decision + "\n");
				Answers.send(emitter, "line 2\n");
			});
		}

		@PostMapping("/deferred")
		@Idempotent(mode = IdempotencyMode.TWO_PHASE)
		DeferredResult<String> deferred(@RequestHeader("Idempotency-Key") String key,
				@RequestHeader(name = "X-Fail", defaultValue = "") String fail) {
			return Answers.deferred(this.executor, this.work, key, fail);
		}

		@PostMapping("/callable")
		@Idempotent(mode = IdempotencyMode.TWO_PHASE)
		Callable<String> callable(@RequestHeader("Idempotency-Key") String key,
				@RequestHeader(name = "X-Fail", defaultValue = "") String fail) {
			return () -> this.work.decide(key, fail);
		}

		@PostMapping("/future")
		@Idempotent(mode = IdempotencyMode.TWO_PHASE)
		CompletableFuture<String> future(@RequestHeader("Idempotency-Key") String key,
				@RequestHeader(name = "X-Fail", defaultValue = "") String fail) {
			return CompletableFuture.supplyAsync(() -> this.work.decide(key, fail), this.executor);
		}

		@PostMapping("/stage")
		@Idempotent(mode = IdempotencyMode.TWO_PHASE)
		CompletionStage<ResponseEntity<String>> stage(@RequestHeader("Idempotency-Key") String key,
				@RequestHeader(name = "X-Fail", defaultValue = "") String fail) {
			return CompletableFuture.supplyAsync(() -> ResponseEntity.status(201).body(this.work.decide(key, fail)),
					this.executor);
		}

		@PostMapping("/web-async-task")
		@Idempotent(mode = IdempotencyMode.TWO_PHASE)
		WebAsyncTask<String> webAsyncTask(@RequestHeader("Idempotency-Key") String key,
				@RequestHeader(name = "X-Fail", defaultValue = "") String fail) {
			return new WebAsyncTask<>(ANSWER_TIMEOUT, () -> this.work.decide(key, fail));
		}

		/** Never answered: Spring MVC answers 503 when it times out. */
		@PostMapping("/deferred-timeout")
		@Idempotent(mode = IdempotencyMode.TWO_PHASE)
		DeferredResult<String> deferredTimeout(@RequestHeader("Idempotency-Key") String key) {
			this.gate.pass(key);
			return new DeferredResult<>(200L);
		}

		@PostMapping("/callable-timeout")
		@Idempotent(mode = IdempotencyMode.TWO_PHASE)
		WebAsyncTask<String> callableTimeout(@RequestHeader("Idempotency-Key") String key) {
			this.gate.pass(key);
			return new WebAsyncTask<>(200L, () -> {
				// Spring MVC cancels the task when it times out, interrupting it; an
				// interrupted task answering first would be answered 500, not the 503 of
				// the
				// timeout
				this.gate.holdUninterruptibly(key + " late");
				return "too late";
			});
		}

		@PostMapping("/object-future")
		@Idempotent(mode = IdempotencyMode.TWO_PHASE)
		Object objectFuture(@RequestHeader("Idempotency-Key") String key,
				@RequestHeader(name = "X-Fail", defaultValue = "") String fail) {
			return CompletableFuture.supplyAsync(() -> this.work.decide(key, fail), this.executor);
		}

		@PostMapping("/object-callable")
		@Idempotent(mode = IdempotencyMode.TWO_PHASE)
		Object objectCallable(@RequestHeader("Idempotency-Key") String key,
				@RequestHeader(name = "X-Fail", defaultValue = "") String fail) {
			return (Callable<String>) () -> this.work.decide(key, fail);
		}

	}

	@SpringBootConfiguration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	@Import({ OneTransactionShapes.class, TwoPhaseShapes.class, Work.class })
	static class ShapesApplication {

		@Bean
		Gate gate() {
			return new Gate();
		}

		@Bean(destroyMethod = "shutdownNow")
		ExecutorService shapesExecutor() {
			return Executors.newFixedThreadPool(8);
		}

	}

}
