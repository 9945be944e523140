package io.ductor.reliability;

import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.transaction.support.TransactionTemplate;

import org.awaitility.Awaitility;
import org.awaitility.core.ConditionTimeoutException;
import io.ductor.effect.EffectOperations;
import io.ductor.effect.EffectOutbox;
import io.ductor.effect.EffectRequest;
import io.ductor.effect.EffectResolution;
import io.ductor.idempotency.Fingerprints;
import io.ductor.idempotency.IdempotencyService;
import io.ductor.idempotency.IdempotentRequest;
import io.ductor.reliability.workload.Receivers;
import io.ductor.reliability.workload.TickLoop.Counter;
import io.ductor.reliability.workload.TickLoop;
import io.ductor.reliability.workload.WorkloadApplication;
import io.ductor.reliability.workload.WorkloadSchema;
import io.ductor.run.TickService;
import io.ductor.test.PostgresExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The hostile-input catalogue: bad inputs across the public API, the properties and HTTP,
 * each with the answer it gets and the rows it wrote. Every refused input must write
 * nothing; the few accepted ones (opaque keys and ids that merely look dangerous) write
 * exactly their own rows. The table goes to {@code target/reliability/Hostile-input.md}.
 */
class HostileInputTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	static final String[] TABLES = { "eec_run", "eec_run_transition", "eec_effect_intent", "eec_routing_idempotency",
			"wl_orders" };

	static ConfigurableApplicationContext app;

	static JdbcClient jdbc;

	static String base;

	static final List<String> rows = new ArrayList<>();

	static final List<String> failures = new ArrayList<>();

	@BeforeAll
	static void start() {
		WorkloadSchema.create(postgres.dataSource());
		app = new SpringApplicationBuilder(WorkloadApplication.class).properties(properties()).run();
		base = "http://127.0.0.1:" + app.getEnvironment().getProperty("local.server.port");
		jdbc = JdbcClient.create(postgres.dataSource());
		ticks().start(TickLoop.RUN_TYPE, "hostile-run", new Counter(0, null));
		jdbc.sql("INSERT INTO eec_run (id, type, state) VALUES ('typed-run', 'workload', "
				+ "'{\"count\": \"seven\", \"lastStamp\": null}')")
			.update();
	}

	static String[] properties() {
		return new String[] { "spring.datasource.url=" + postgres.jdbcUrl(),
				"spring.datasource.username=" + postgres.username(),
				"spring.datasource.password=" + ((postgres.password() != null) ? postgres.password() : ""),
				"server.port=0", "workload.ticking=false", "ductor.effects.drainer.poll-interval=100ms",
				"ductor.effects.backoff.initial=100ms", "logging.level.root=warn" };
	}

	@AfterAll
	static void stop() {
		if (app != null) {
			app.close();
		}
	}

	static TickService ticks() {
		return app.getBean(TickService.class);
	}

	static Receivers receivers() {
		return app.getBean(Receivers.class);
	}

	static EffectOutbox outbox() {
		return app.getBean(EffectOutbox.class);
	}

	static EffectOperations operations() {
		return app.getBean(EffectOperations.class);
	}

	static IdempotencyService idempotency() {
		return app.getBean(IdempotencyService.class);
	}

	static <T> T inTransaction(Callable<T> body) {
		return app.getBean(TransactionTemplate.class).execute((status) -> {
			try {
				return body.call();
			}
			catch (RuntimeException ex) {
				throw ex;
			}
			catch (Exception ex) {
				throw new IllegalStateException(ex);
			}
		});
	}

	static Map<String, Long> snapshot() {
		Map<String, Long> counts = new LinkedHashMap<>();
		for (String table : TABLES) {
			counts.put(table, jdbc.sql("SELECT count(*) FROM " + table).query(Long.class).single());
		}
		return counts;
	}

	/**
	 * Run one case: its answer must contain {@code expected} and it must write exactly
	 * {@code writes} ("" for nothing, else "table+n" items).
	 */
	static void check(String area, String input, String expected, String writes, Callable<Object> action) {
		Map<String, Long> before = snapshot();
		String answer;
		try {
			Object result = action.call();
			answer = "accepted: " + result;
		}
		catch (Throwable ex) {
			// the first cause whose message holds the expected text (the one naming the
			// property), else the root
			Throwable root = ex;
			Throwable named = null;
			for (Throwable t = ex; t != null; t = (t.getCause() != t) ? t.getCause() : null) {
				root = t;
				if (named == null && t != ex && t.getMessage() != null && t.getMessage().contains(expected)) {
					named = t;
				}
			}
			Throwable shown = (named != null) ? named : root;
			answer = ex.getClass().getSimpleName()
					+ ((shown != ex) ? " (" + shown.getClass().getSimpleName() + ")" : "") + ": "
					+ String.valueOf(shown.getMessage());
		}
		answer = answer.replace('\n', ' ').replace("|", "\\|");
		Map<String, Long> after = snapshot();
		List<String> diff = new ArrayList<>();
		after.forEach((table, count) -> {
			long delta = count - before.get(table);
			if (delta != 0) {
				diff.add(table + ((delta > 0) ? "+" : "") + delta);
			}
		});
		String written = String.join(" ", diff);
		boolean ok = answer.contains(expected) && written.equals(writes);
		String shown = (answer.length() > 170) ? answer.substring(0, 170) + "…" : answer;
		rows.add("| " + (rows.size() + 1) + " | " + area + " | " + input.replace("|", "\\|") + " | " + shown + " | "
				+ (written.isEmpty() ? "nothing" : written) + " | " + (ok ? "ok" : "**FAILED**") + " |");
		if (!ok) {
			failures.add(input + ": expected '" + expected + "' writing '" + writes + "', got '" + answer
					+ "' writing '" + written + "'");
		}
	}

	static HttpResponse<String> post(String path, String body, String... headers) throws Exception {
		HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(base + path))
			.timeout(Duration.ofSeconds(20))
			.header("Content-Type", "application/json")
			.POST(HttpRequest.BodyPublishers.ofString(body));
		for (int i = 0; i < headers.length; i += 2) {
			request.header(headers[i], headers[i + 1]);
		}
		return Workload.HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString());
	}

	/**
	 * A request written byte by byte, for header bytes an HTTP client library would
	 * refuse or rewrite.
	 */
	static String rawPost(String path, String body, byte[] key) throws Exception {
		URI uri = URI.create(base);
		try (java.net.Socket socket = new java.net.Socket(uri.getHost(), uri.getPort())) {
			socket.setSoTimeout(20_000);
			java.io.ByteArrayOutputStream request = new java.io.ByteArrayOutputStream();
			byte[] bytes = body.getBytes(java.nio.charset.StandardCharsets.UTF_8);
			request.writeBytes(("POST " + path + " HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n"
					+ "Content-Type: application/json\r\nContent-Length: " + bytes.length + "\r\nIdempotency-Key: ")
				.getBytes(java.nio.charset.StandardCharsets.ISO_8859_1));
			request.writeBytes(key);
			request.writeBytes("\r\n\r\n".getBytes(java.nio.charset.StandardCharsets.ISO_8859_1));
			request.writeBytes(bytes);
			socket.getOutputStream().write(request.toByteArray());
			String response = new String(socket.getInputStream().readAllBytes(),
					java.nio.charset.StandardCharsets.UTF_8);
			String status = response.substring(response.indexOf(' ') + 1, response.indexOf(' ') + 4);
			int detail = response.indexOf("\"detail\"");
			return status + " " + ((detail >= 0) ? response.substring(detail, Math.min(response.length(), detail + 110))
					: response.substring(response.indexOf("\r\n\r\n") + 4));
		}
	}

	static String http(HttpResponse<String> response) {
		String body = response.body();
		int detail = body.indexOf("\"detail\"");
		String shown = (detail >= 0) ? body.substring(detail, Math.min(body.length(), detail + 110)) : body;
		return response.statusCode() + " " + response.headers().firstValue("Content-Type").orElse("") + " "
				+ response.headers().firstValue("Idempotency-Replayed").map((v) -> "replayed ").orElse("") + shown;
	}

	static String intentAfterDispatch(String key) throws InterruptedException {
		Map<String, Object> row;
		try {
			row = Awaitility.await()
				.atMost(Duration.ofSeconds(20))
				.pollDelay(Duration.ZERO)
				.pollInterval(Duration.ofMillis(50))
				.until(() -> jdbc.sql("SELECT status, last_error FROM eec_effect_intent WHERE idempotency_key = ?")
					.param(key)
					.query()
					.singleRow(),
						(found) -> !"pending".equals(found.get("status")) && !"in_flight".equals(found.get("status")));
		}
		catch (ConditionTimeoutException ex) {
			return "still pending";
		}
		return row.get("status") + ", " + row.get("last_error");
	}

	static void insertIntent(String effect, String key, String payload) {
		jdbc.sql(
				"INSERT INTO eec_effect_intent (effect_name, idempotency_key, payload, payload_fingerprint, max_attempts) "
						+ "VALUES (?, ?, ?::jsonb, 'old-version', 3)")
			.params(effect, key, payload)
			.update();
	}

	static String startupFailure(String property) {
		List<String> all = new ArrayList<>(List.of(properties()));
		all.add(property);
		all.add("spring.main.web-application-type=none");
		SpringApplication application = new SpringApplicationBuilder(WorkloadApplication.class)
			.web(WebApplicationType.NONE)
			.properties(all.toArray(String[]::new))
			.build();
		try (ConfigurableApplicationContext context = application.run()) {
			return "started";
		}
	}

	@Test
	void everyHostileInputGetsAClearAnswerAndRefusedOnesWriteNothing() throws Exception {
		TickService ticks = ticks();
		Counter zero = new Counter(0, null);
		String area = "TickService";
		check(area, "start: null run id", "must not be null", "", () -> ticks.start("workload", null, zero));
		check(area, "start: empty run id", "must not be blank", "", () -> ticks.start("workload", "", zero));
		check(area, "start: run id of 10 000 characters", "at most 200", "",
				() -> ticks.start("workload", "r".repeat(10_000), zero));
		check(area, "start: run id with NUL (U+0000)", "control characters", "",
				() -> ticks.start("workload", "run\u0000nul", zero));
		check(area, "tick: stamp with a newline", "control characters", "",
				() -> ticks.tick("hostile-run", "stamp\nnext", Counter.class, (s, t) -> s));
		check(area, "tick: unknown run", "no-such-run", "",
				() -> ticks.tick("no-such-run", "s1", Counter.class, (s, t) -> s));
		check(area, "start: existing run id with another type", "RunTypeMismatchException", "",
				() -> ticks.start("other-type", "hostile-run", zero));
		check(area, "tick: state written by an older version with another type (count: \"seven\")", "Exception", "",
				() -> ticks.tick("typed-run", "s1", Counter.class, (s, t) -> new Counter(s.count() + 1, "s1")));
		check(area, "start: SQL-looking run id x'); DROP TABLE eec_run; --", "CREATED", "eec_run+1",
				() -> ticks.start("workload", "x'); DROP TABLE eec_run; --", zero) + ", read back: "
						+ ticks.find("x'); DROP TABLE eec_run; --", Counter.class).isPresent());
		String unicode = "заказ-🚀-עברית-e\u0301";
		check(area, "start: unicode run id (Cyrillic, emoji, RTL, combining accent)", "read back verbatim: true",
				"eec_run+1", () -> ticks.start("workload", unicode, zero) + ", read back verbatim: "
						+ ticks.find(unicode, Counter.class).map((run) -> run.id().equals(unicode)).orElse(false));
		check(area, "tick: a step that throws", "IllegalStateException: step refuses", "",
				() -> ticks.tick("hostile-run", "throws", Counter.class, (s, t) -> {
					receivers().deliver("hostile-run", "throws");
					throw new IllegalStateException("step refuses");
				}));

		area = "@DurableEffect";
		check(area, "call outside a transaction", "DurableEffectException", "", () -> {
			receivers().deliver("hostile-run", "no-tx");
			return null;
		});
		check(area, "key longer than 200 characters", "DurableEffectException", "", () -> inTransaction(() -> {
			receivers().deliver("hostile-run", "s".repeat(300));
			return null;
		}));
		check(area, "key with a TAB (U+0009)", "DurableEffectException", "", () -> inTransaction(() -> {
			receivers().deliver("hostile-run", "a\tb");
			return null;
		}));
		check(area, "EffectOutbox: unknown effect name", "Nope.nothing", "",
				() -> inTransaction(() -> outbox().schedule(EffectRequest.of("Nope.nothing", "x"))));
		check(area, "EffectOutbox: payload of 300 KB (limit 256 KB)", "DurableEffectException", "", () -> inTransaction(
				() -> outbox().schedule(EffectRequest.of("Receivers.probe", "x".repeat(300_000), 1).withKey("huge"))));
		check(area, "EffectOutbox: wrong argument types (\"one\" for int)", "Exception", "", () -> inTransaction(
				() -> outbox().schedule(EffectRequest.of("Receivers.probe", "x", "one").withKey("types"))));
		inTransaction(() -> outbox().schedule(EffectRequest.of("Receivers.probe", "same", 1).withKey("reuse")));
		check(area, "same key, same payload again", "accepted", "", () -> inTransaction(
				() -> outbox().schedule(EffectRequest.of("Receivers.probe", "same", 1).withKey("reuse"))));
		check(area, "same key, new payload", "IdempotencyKeyReuseException", "", () -> inTransaction(
				() -> outbox().schedule(EffectRequest.of("Receivers.probe", "same", 2).withKey("reuse"))));
		check(area, "intent row of an effect that no longer exists (Removed.effect)",
				"failed, Effect 'Removed.effect' does not exist", "eec_effect_intent+1", () -> {
					insertIntent("Removed.effect", "removed-1", "[\"x\"]");
					return intentAfterDispatch("removed-1");
				});
		check(area, "intent row whose payload changed type between versions ([\"x\", \"not-a-number\"])", "failed,",
				"eec_effect_intent+1", () -> {
					insertIntent("Receivers.probe", "changed-1", "[\"x\", \"not-a-number\"]");
					return intentAfterDispatch("changed-1");
				});
		check(area, "intent row whose payload is not an array ({\"not\": \"an array\"})", "failed,",
				"eec_effect_intent+1", () -> {
					insertIntent("Receivers.probe", "object-1", "{\"not\": \"an array\"}");
					return intentAfterDispatch("object-1");
				});
		check(area, "EffectOperations.resolve of an intent that does not exist", "Exception", "",
				() -> operations().resolve(987654321L, EffectResolution.RETRY));
		long completed = jdbc.sql("SELECT id FROM eec_effect_intent WHERE idempotency_key = 'reuse'")
			.query(Long.class)
			.single();
		intentAfterDispatch("reuse");
		check(area, "EffectOperations.cancel of a completed intent", "Exception", "",
				() -> operations().cancel(completed));

		area = "IdempotencyService";
		IdempotencyService service = idempotency();
		check(area, "null key", "InvalidIdempotencyKeyException", "", () -> service.reserve("", "orders", null, "f"));
		check(area, "key of 256 characters", "at most 255", "",
				() -> service.reserve("", "orders", "k".repeat(256), "f"));
		check(area, "key with non-ASCII characters (ключ)", "visible ASCII", "",
				() -> service.reserve("", "orders", "ключ", "f"));
		check(area, "key with a space", "visible ASCII", "", () -> service.reserve("", "orders", "a b", "f"));
		check(area, "null tenant scope", "tenantScope", "", () -> service.reserve(null, "orders", "k", "f"));
		check(area, "tenant scope with BEL (U+0007)", "control characters", "",
				() -> service.reserve("ten\u0007ant", "orders", "k", "f"));
		String sqlKey = "'OR'1'='1;--";
		check(area, "SQL-looking key 'OR'1'='1;-- (visible ASCII: a legal opaque key)", "accepted",
				"eec_routing_idempotency+1",
				() -> service.execute(new IdempotentRequest("", "hostile", sqlKey, "f"), String.class, () -> "ran")
					.value()
						+ ", stored verbatim: "
						+ jdbc.sql("SELECT count(*) FROM eec_routing_idempotency WHERE idempotency_key = ?")
							.param(sqlKey)
							.query(Long.class)
							.single());
		service.execute(new IdempotentRequest("", "hostile", "fp-reuse", "fingerprint-a"), String.class, () -> "first");
		check(area, "reused key with a new fingerprint", "IdempotencyKeyReuseException", "", () -> service
			.execute(new IdempotentRequest("", "hostile", "fp-reuse", "fingerprint-b"), String.class, () -> "second"));
		service.execute(new IdempotentRequest("alice", "hostile", "shared", "f"), String.class, () -> "alice's answer");
		check(area, "tenant crossing: bob sends alice's key and fingerprint", "accepted: bob's answer",
				"eec_routing_idempotency+1",
				() -> service
					.execute(new IdempotentRequest("bob", "hostile", "shared", "f"), String.class, () -> "bob's answer")
					.value());

		area = "HTTP";
		check(area, "POST /echo without Idempotency-Key", "400 application/problem+json", "",
				() -> http(post("/echo", "{\"a\":1}")));
		check(area, "POST /echo with an empty key", "400 application/problem+json", "",
				() -> http(post("/echo", "{\"a\":1}", "Idempotency-Key", "")));
		check(area, "POST /echo with two Idempotency-Key headers", "400 application/problem+json", "",
				() -> http(post("/echo", "{\"a\":1}", "Idempotency-Key", "k1", "Idempotency-Key", "k2")));
		check(area, "POST /echo with a key of 300 characters", "400 application/problem+json", "",
				() -> http(post("/echo", "{\"a\":1}", "Idempotency-Key", "k".repeat(300))));
		check(area, "POST /echo with a key holding UTF-8 bytes (clé, raw socket)", "400", "",
				() -> rawPost("/echo", "{\"a\":1}", "cl\u00e9".getBytes(java.nio.charset.StandardCharsets.UTF_8)));
		// Spring MVC answers it with sendError: the error page is rendered after the
		// filter, never stored
		check(area, "POST /echo with malformed JSON ({not json)", "400", "",
				() -> http(post("/echo", "{not json", "Idempotency-Key", "malformed-1")));
		post("/echo", "{\"a\":1}", "Idempotency-Key", "body-reuse");
		check(area, "POST /echo reusing a key with another body", "422 application/problem+json", "",
				() -> http(post("/echo", "{\"a\":2}", "Idempotency-Key", "body-reuse")));
		check(area, "POST /echo with a body of 2 MB (ductor.idempotency.max-request-size is 1 MB)",
				"413 application/problem+json", "",
				() -> http(post("/echo", "{\"big\":\"" + "x".repeat(2_000_000) + "\"}", "Idempotency-Key", "big-1")));
		HttpResponse<String> alice = post("/echo", "{\"a\":1}", "Idempotency-Key", "tenant-key", "X-Tenant", "alice");
		check(area, "tenant crossing: X-Tenant bob replays alice's key and body", "200", "eec_routing_idempotency+1",
				() -> {
					HttpResponse<String> bob = post("/echo", "{\"a\":1}", "Idempotency-Key", "tenant-key", "X-Tenant",
							"bob");
					return bob.statusCode() + ", replayed: "
							+ bob.headers().firstValue("Idempotency-Replayed").isPresent() + ", same body as alice's: "
							+ bob.body().equals(alice.body());
				});
		check(area, "POST /orders with SQL-looking key 'OR'1'='1;--", "200",
				"eec_effect_intent+1 eec_routing_idempotency+1 wl_orders+1",
				() -> http(post("/orders", "{\"n\":1}", "Idempotency-Key", sqlKey)));
		check(area, "POST /orders replaying that key", "200", "",
				() -> http(post("/orders", "{\"n\":1}", "Idempotency-Key", sqlKey)));

		area = "properties";
		check(area, "ductor.effects.drainer.batch-size=0", "ductor.effects.drainer.batch-size", "",
				() -> startupFailure("ductor.effects.drainer.batch-size=0"));
		check(area, "ductor.effects.drainer.lease=-1s", "ductor.effects.drainer.lease", "",
				() -> startupFailure("ductor.effects.drainer.lease=-1s"));
		check(area, "ductor.schema.mode=bogus", "ductor.schema.mode", "",
				() -> startupFailure("ductor.schema.mode=bogus"));
		check(area, "ductor.idempotency.retention=1h (shorter than completed-ttl 24h)", "ductor.idempotency.retention",
				"", () -> startupFailure("ductor.idempotency.retention=1h"));
		check(area, "ductor.effects.max-attempts=0", "ductor.effects.max-attempts", "",
				() -> startupFailure("ductor.effects.max-attempts=0"));
		check(area, "ductor.idempotency.header-name= (empty)", "ductor.idempotency.header-name", "",
				() -> startupFailure("ductor.idempotency.header-name="));

		StringBuilder table = new StringBuilder("### Hostile input\n\n| # | area | input | answer | written | check |\n"
				+ "|---|---|---|---|---|---|\n");
		rows.forEach((row) -> table.append(row).append('\n'));
		System.out.println(table);
		java.nio.file.Files.createDirectories(Scale.reports());
		java.nio.file.Files.writeString(Scale.reports().resolve("Hostile-input.md"), table);
		assertThat(rows).hasSizeGreaterThanOrEqualTo(25);
		assertThat(failures).as("hostile inputs answered or written otherwise than expected").isEmpty();
	}

}
