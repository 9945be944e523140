package io.ductor.idempotency.web;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.UUID;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.core.io.ByteArrayResource;
import org.springframework.core.io.Resource;
import org.springframework.http.ResponseEntity;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Controller;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.web.bind.annotation.CrossOrigin;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.PutMapping;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.context.request.WebRequest;
import org.springframework.web.servlet.config.annotation.CorsRegistry;
import org.springframework.web.servlet.config.annotation.WebMvcConfigurer;

import io.ductor.idempotency.IdempotencyRows;
import io.ductor.test.PostgresExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Where a key applies and what its answers carry, over real HTTP on a real PostgreSQL: a
 * key applies to whichever handler a request finally reaches (a forward, an include, a
 * {@code HEAD} served by a {@code GET}); it belongs to its tenant across endpoints, and a
 * conditional or range header makes another request; replays and problems carry the CORS
 * headers of the replaying request's origin; a success whose work was rolled back is
 * never sent as one; a tenant scope that cannot hold keys is a client error.
 */
class IngressPathsHttpTest {

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
		jdbc.sql("CREATE TABLE room (room_key text NOT NULL)").update();
		app = new SpringApplicationBuilder(PathsApplication.class).properties(postgres.springProperties())
			.properties("server.port=0", "ductor.idempotency.sweeper.interval=1h", "ductor.retention.enabled=false",
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
	void aRequestForwardedToAnIdempotentHandlerHasItsKeyApplied() throws Exception {
		String key = newKey();
		HttpResponse<String> first = client.post("/legacy/orders", key);
		HttpResponse<String> again = client.post("/legacy/orders", key);

		assertThat(first.statusCode()).isEqualTo(201);
		assertThat(again.statusCode()).isEqualTo(201);
		assertThat(again.headers().firstValue("Idempotency-Replayed")).hasValue("true");
		assertThat(again.body()).isEqualTo(first.body());
		assertThat(gate.runs(key)).as("runs of the forwarded handler").isOne();
		// the request is what the client sent: the same key on the handler's own path is
		// another request
		assertThat(client.post("/orders", key).statusCode()).isEqualTo(422);
		assertThat(client.post("/legacy/orders", null).statusCode()).isEqualTo(400);
	}

	@Test
	void anIdempotentHandlerReachedByAnIncludeRunsOncePerKey() throws Exception {
		String key = newKey();
		HttpResponse<String> first = client.post("/including", key);
		HttpResponse<String> again = client.post("/including", key);

		assertThat(first.body()).isEqualTo("before [ordered " + key + " run 1] after");
		assertThat(again.body()).isEqualTo(first.body());
		assertThat(gate.runs(key)).as("runs of the included handler").isOne();
	}

	@Test
	void aHeadRequestIsItsGetWithTheKeyApplied() throws Exception {
		String key = newKey();
		HttpResponse<String> get = client.send("GET", "/reports/7", key, null);
		HttpResponse<String> head = client.send("HEAD", "/reports/7", key, null);
		assertThat(get.body()).isEqualTo("report 7, run 1");
		assertThat(head.statusCode()).isEqualTo(200);
		assertThat(head.headers().firstValue("Idempotency-Replayed")).hasValue("true");
		assertThat(head.headers().firstValueAsLong("Content-Length")).hasValue(get.body().length());
		assertThat(gate.runs("report 7")).isOne();

		// a HEAD first decides; its GET replays the answer the HEAD's handler gave
		String headFirst = newKey();
		assertThat(client.send("HEAD", "/reports/8", headFirst, null).statusCode()).isEqualTo(200);
		HttpResponse<String> getAfter = client.send("GET", "/reports/8", headFirst, null);
		assertThat(getAfter.headers().firstValue("Idempotency-Replayed")).hasValue("true");
		assertThat(getAfter.body()).isEqualTo("report 8, run 1");
		assertThat(gate.runs("report 8")).isOne();

		assertThat(client.send("HEAD", "/reports/9", null, null).statusCode()).isEqualTo(400);
		assertThat(gate.runs("report 9")).isZero();
	}

	@Test
	void replaysAndProblemsCarryTheCorsHeadersOfTheReplayingRequestsOrigin() throws Exception {
		String key = newKey();
		HttpResponse<String> first = client.post("/cors/orders", key, "Origin", "https://shop.example");
		assertThat(first.statusCode()).isEqualTo(201);
		assertThat(first.headers().firstValue("Access-Control-Allow-Origin")).hasValue("https://shop.example");

		HttpResponse<String> replay = client.post("/cors/orders", key, "Origin", "https://shop.example");
		assertThat(replay.headers().firstValue("Idempotency-Replayed")).hasValue("true");
		assertThat(replay.headers().firstValue("Access-Control-Allow-Origin")).hasValue("https://shop.example");
		assertThat(replay.headers().allValues("Vary")).isEqualTo(first.headers().allValues("Vary"))
			.anyMatch((vary) -> vary.contains("Origin"));

		// computed for this request's origin, never copied from the first answer
		HttpResponse<String> sameOrigin = client.post("/cors/orders", key);
		assertThat(sameOrigin.headers().firstValue("Idempotency-Replayed")).hasValue("true");
		assertThat(sameOrigin.headers().firstValue("Access-Control-Allow-Origin")).isEmpty();
		HttpResponse<String> otherShop = client.post("/cors/orders", key, "Origin", "https://admin.example");
		assertThat(otherShop.headers().firstValue("Access-Control-Allow-Origin")).hasValue("https://admin.example");
		HttpResponse<String> refused = client.post("/cors/orders", key, "Origin", "https://evil.example");
		assertThat(refused.statusCode()).isEqualTo(403);
		assertThat(refused.headers().firstValue("Idempotency-Replayed")).isEmpty();

		// the filter's own answers too, and the global configuration's origins
		HttpResponse<String> reused = client.send("POST", "/cors/orders", key, "{\"other\":1}", "Origin",
				"https://shop.example");
		assertThat(reused.statusCode()).isEqualTo(422);
		assertThat(reused.headers().firstValue("Access-Control-Allow-Origin")).hasValue("https://shop.example");
		String global = newKey();
		client.post("/global/orders", global, "Origin", "https://global.example");
		HttpResponse<String> globalReplay = client.post("/global/orders", global, "Origin", "https://global.example");
		assertThat(globalReplay.headers().firstValue("Idempotency-Replayed")).hasValue("true");
		assertThat(globalReplay.headers().firstValue("Access-Control-Allow-Origin")).hasValue("https://global.example");
		assertThat(gate.runs(key)).isOne();
	}

	@Test
	void aKeyBelongsToItsTenantAcrossEndpointsUnlessAPoolIsNamed() throws Exception {
		String key = newKey();
		assertThat(client.post("/accounts", key).statusCode()).isEqualTo(201);
		HttpResponse<String> otherMethod = client.send("PUT", "/accounts", key, "{}");
		assertThat(otherMethod.statusCode()).isEqualTo(422);
		assertThat(otherMethod.body()).contains("was already used for a different request");
		assertThat(client.post("/reports/1/export", key).statusCode()).isEqualTo(422);
		assertThat(gate.runs("PUT " + key)).isZero();
		assertThat(rows.status("", Idempotent.DEFAULT_POOL, key)).isEqualTo("completed");

		// a named pool keeps its keys apart, and another tenant has keys of its own
		assertThat(client.post("/accounts/notes", key).statusCode()).isEqualTo(201);
		assertThat(rows.status("", "notes", key)).isEqualTo("completed");
		assertThat(client.send("PUT", "/accounts", key, "{}", "X-Tenant", "acme").statusCode()).isEqualTo(200);
		assertThat(gate.runs("PUT " + key)).isOne();
	}

	@Test
	void conditionalAndRangeHeadersMakeAnotherRequest() throws Exception {
		String stale = newKey();
		HttpResponse<String> refused = client.send("PUT", "/documents/1", stale, "{}", "If-Match", "\"v1\"");
		assertThat(refused.statusCode()).isEqualTo(412);
		assertThat(client.send("PUT", "/documents/1", stale, "{}", "If-Match", "\"v1\"").statusCode()).isEqualTo(412);
		assertThat(client.send("PUT", "/documents/1", stale, "{}").statusCode()).isEqualTo(422);

		String cached = newKey();
		assertThat(client.send("GET", "/documents/1", cached, null, "If-None-Match", "\"v2\"").statusCode())
			.isEqualTo(304);
		assertThat(client.send("GET", "/documents/1", cached, null).statusCode()).isEqualTo(422);

		String part = newKey();
		HttpResponse<String> partial = client.send("GET", "/files/1", part, null, "Range", "bytes=0-3");
		assertThat(partial.statusCode()).isEqualTo(206);
		assertThat(partial.body()).isEqualTo("0123");
		HttpResponse<String> whole = client.send("GET", "/files/1", part, null);
		assertThat(whole.statusCode()).isEqualTo(422);
		assertThat(client.send("GET", "/files/1", newKey(), null).body()).isEqualTo("0123456789");
	}

	@Test
	void aReplayCarriesTheHeadersThatMakeItTheSameAnswer() throws Exception {
		// a partial answer without its range is no partial answer
		String part = newKey();
		HttpResponse<String> partial = client.send("GET", "/files/1", part, null, "Range", "bytes=2-5");
		assertThat(partial.statusCode()).isEqualTo(206);
		assertThat(partial.headers().firstValue("Content-Range")).hasValue("bytes 2-5/10");
		HttpResponse<String> replayed = client.send("GET", "/files/1", part, null, "Range", "bytes=2-5");
		assertThat(replayed.headers().firstValue("Idempotency-Replayed")).hasValue("true");
		assertThat(replayed.statusCode()).isEqualTo(206);
		assertThat(replayed.body()).isEqualTo("2345");
		assertThat(replayed.headers().allValues("Content-Range")).containsExactly("bytes 2-5/10");

		// an answer no cache may keep is not kept by one when it is replayed either
		String statement = newKey();
		HttpResponse<String> first = client.send("GET", "/statements/7", statement, null);
		assertThat(first.headers().allValues("Cache-Control")).containsExactly("no-store");
		HttpResponse<String> again = client.send("GET", "/statements/7", statement, null);
		assertThat(again.headers().firstValue("Idempotency-Replayed")).hasValue("true");
		assertThat(again.headers().allValues("Cache-Control")).containsExactly("no-store");
		assertThat(again.headers().allValues("Expires")).isEqualTo(first.headers().allValues("Expires"));
	}

	@Test
	void aSuccessAfterTheHandlersTransactionalWorkFailedIsA500ProblemAndNothingIsKept() throws Exception {
		String key = newKey();
		MeterRegistry meters = app.getBean(MeterRegistry.class);
		double before = released(meters);
		HttpResponse<String> answered = client.post("/rooms", key);

		assertThat(answered.statusCode()).isEqualTo(500);
		assertThat(answered.headers().firstValue("Content-Type")).hasValue("application/problem+json");
		assertThat(answered.body()).contains("rolled back").doesNotContain("held room");
		assertThat(jdbc.sql("SELECT count(*) FROM room").query(Long.class).single()).isZero();
		assertThat(rows.row("", Idempotent.DEFAULT_POOL, key)).isEmpty();
		assertThat(released(meters)).isEqualTo(before + 1);
	}

	@Test
	void aTenantScopeThatCannotHoldKeysIsA400Problem() throws Exception {
		for (String tenant : new String[] { "t".repeat(201), "acme\tcorp" }) {
			String key = newKey();
			HttpResponse<String> refused = client.post("/accounts", key, "X-Tenant", tenant);
			assertThat(refused.statusCode()).isEqualTo(400);
			assertThat(refused.headers().firstValue("Content-Type")).hasValue("application/problem+json");
			assertThat(refused.body()).contains("tenant scope");
			assertThat(gate.runs("POST " + key)).isZero();
		}
	}

	static double released(MeterRegistry meters) {
		var counter = meters.find("ductor.idempotency.released").tag("reason", "rolled_back").counter();
		return (counter != null) ? counter.count() : 0;
	}

	static String newKey() {
		return UUID.randomUUID().toString();
	}

	@RestController
	static class PathsController {

		private final Gate gate;

		private final Rooms rooms;

		PathsController(Gate gate, Rooms rooms) {
			this.gate = gate;
			this.rooms = rooms;
		}

		@PostMapping({ "/orders", "/forwarded/orders", "/included/orders", "/cors/orders", "/global/orders" })
		@Idempotent
		@CrossOrigin(origins = { "https://shop.example", "https://admin.example" })
		ResponseEntity<String> order(@RequestHeader("Idempotency-Key") String key) {
			int run = this.gate.pass(key);
			return ResponseEntity.created(URI.create("/orders/" + key)).body("ordered " + key + " run " + run);
		}

		@PostMapping("/accounts")
		@Idempotent
		ResponseEntity<String> open(@RequestHeader("Idempotency-Key") String key) {
			return ResponseEntity.status(201).body("opened, run " + this.gate.pass("POST " + key));
		}

		@PutMapping("/accounts")
		@Idempotent
		String update(@RequestHeader("Idempotency-Key") String key) {
			return "updated, run " + this.gate.pass("PUT " + key);
		}

		@PostMapping("/accounts/notes")
		@Idempotent(pool = "notes")
		ResponseEntity<String> note(@RequestHeader("Idempotency-Key") String key) {
			return ResponseEntity.status(201).body("noted, run " + this.gate.pass("note " + key));
		}

		@GetMapping("/reports/{id}")
		@Idempotent
		String report(@PathVariable int id) {
			return "report " + id + ", run " + this.gate.pass("report " + id);
		}

		@PostMapping("/reports/{id}/export")
		@Idempotent
		String export(@PathVariable int id) {
			return "exported " + id + ", run " + this.gate.pass("export " + id);
		}

		@PutMapping("/documents/{id}")
		@Idempotent
		String save(@PathVariable int id, WebRequest request) {
			return request.checkNotModified("\"v2\"") ? null : "saved " + id;
		}

		@GetMapping("/documents/{id}")
		@Idempotent
		String document(@PathVariable int id, WebRequest request) {
			return request.checkNotModified("\"v2\"") ? null : "document " + id;
		}

		@GetMapping("/files/{id}")
		@Idempotent
		ResponseEntity<Resource> file(@PathVariable int id) {
			return ResponseEntity.ok(new ByteArrayResource("0123456789".getBytes(StandardCharsets.US_ASCII)));
		}

		@GetMapping("/statements/{id}")
		@Idempotent
		ResponseEntity<String> statement(@PathVariable int id) {
			return ResponseEntity.ok()
				.cacheControl(org.springframework.http.CacheControl.noStore())
				.header("Expires", "Thu, 01 Jan 1970 00:00:00 GMT")
				.lastModified(0)
				.body("statement " + id);
		}

		@PostMapping("/rooms")
		@Idempotent
		ResponseEntity<String> room(@RequestHeader("Idempotency-Key") String key) {
			this.rooms.holdAll(key);
			return ResponseEntity.status(201).body("held room for " + key);
		}

		/** Includes the order handler between two lines of its own. */
		@PostMapping("/including")
		void including(HttpServletRequest request, HttpServletResponse response) throws IOException, ServletException {
			response.setContentType("text/plain");
			response.getOutputStream().write("before [".getBytes(StandardCharsets.US_ASCII));
			request.getRequestDispatcher("/included/orders").include(request, response);
			response.getOutputStream().write("] after".getBytes(StandardCharsets.US_ASCII));
		}

	}

	@Controller
	static class LegacyController {

		@PostMapping("/legacy/orders")
		String legacy() {
			return "forward:/forwarded/orders";
		}

	}

	/** The application's own transactional services. */
	static class Rooms {

		private final JdbcTemplate jdbc;

		private final Inventory inventory;

		Rooms(JdbcTemplate jdbc, Inventory inventory) {
			this.jdbc = jdbc;
			this.inventory = inventory;
		}

		/** Holds the room, and shrugs off the inventory's failure: Spring answers 500. */
		@Transactional
		public void holdAll(String key) {
			this.jdbc.update("INSERT INTO room VALUES (?)", key);
			try {
				this.inventory.take(key);
			}
			catch (IllegalStateException ex) {
				// the inventory's transaction (this one) is rollback-only now
			}
		}

	}

	static class Inventory {

		@Transactional
		public void take(String key) {
			throw new IllegalStateException("no inventory for " + key);
		}

	}

	@SpringBootConfiguration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	@Import({ PathsController.class, LegacyController.class, Rooms.class, Inventory.class })
	static class PathsApplication {

		@Bean
		Gate gate() {
			return new Gate();
		}

		@Bean
		SimpleMeterRegistry meterRegistry() {
			return new SimpleMeterRegistry();
		}

		@Bean
		TenantScopeResolver tenantFromHeader() {
			return (request) -> (request.getHeader("X-Tenant") != null) ? request.getHeader("X-Tenant") : "";
		}

		@Bean
		WebMvcConfigurer globalCors() {
			return new WebMvcConfigurer() {

				@Override
				public void addCorsMappings(CorsRegistry registry) {
					registry.addMapping("/global/**").allowedOrigins("https://global.example");
				}

			};
		}

	}

}
