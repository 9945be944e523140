package io.ductor.idempotency.web;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

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
import org.springframework.http.MediaType;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.PutMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestMethod;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RequestPart;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.multipart.MultipartFile;

import io.ductor.idempotency.IdempotencyRows;
import io.ductor.test.PostgresExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What an {@code @Idempotent} request's fingerprint covers, body shape by body shape
 * (forms of every method, multipart uploads, raw bytes) and how large a request may be,
 * on a real Tomcat over real HTTP.
 */
class IdempotentRequestBodyHttpTest {

	private static final int LIMIT = 4096;

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	/**
	 * Boot's defaults: FormContentFilter parses PUT/PATCH/DELETE forms, the container
	 * parses multipart.
	 */
	static ConfigurableApplicationContext app;

	/**
	 * Neither FormContentFilter nor the container's multipart support: bodies reach the
	 * handler raw.
	 */
	static ConfigurableApplicationContext bare;

	static HttpClient http;

	static Counter counter;

	static Counter bareCounter;

	static IdempotencyRows rows;

	@BeforeAll
	static void start() {
		app = start("ductor.idempotency.max-request-size=" + LIMIT + "B", "spring.servlet.multipart.max-file-size=2KB");
		bare = start("ductor.idempotency.max-request-size=" + LIMIT + "B",
				"spring.mvc.formcontent.filter.enabled=false", "spring.servlet.multipart.enabled=false");
		http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
		counter = app.getBean(Counter.class);
		bareCounter = bare.getBean(Counter.class);
		rows = new IdempotencyRows(postgres.dataSource());
	}

	private static ConfigurableApplicationContext start(String... properties) {
		return new SpringApplicationBuilder(BodiesApplication.class).properties(postgres.springProperties())
			.properties("server.port=0", "ductor.idempotency.sweeper.interval=1h", "ductor.retention.enabled=false")
			.properties(properties)
			.run();
	}

	@BeforeEach
	void reset() {
		counter.reset();
		bareCounter.reset();
	}

	@AfterAll
	static void stop() {
		app.close();
		bare.close();
	}

	@Test
	void aFormOfEveryMethodIsFingerprintedByItsParametersAndItsHandlerReceivesThem() throws Exception {
		for (String method : new String[] { "PUT", "PATCH", "DELETE", "POST" }) {
			String key = newKey();
			HttpResponse<String> first = send(app, method, "/transfers", key, FORM, body("amount=10&to=alice"));
			assertThat(first.statusCode()).as(method).isEqualTo(200);
			assertThat(first.body()).as(method).endsWith(method + " 10 to alice");

			HttpResponse<String> again = send(app, method, "/transfers", key, FORM, body("amount=10&to=alice"));
			assertThat(again.headers().firstValue("Idempotency-Replayed")).as(method).hasValue("true");
			assertThat(again.body()).isEqualTo(first.body());

			assertProblem(send(app, method, "/transfers", key, FORM, body("amount=9999&to=mallory")), 422,
					"was already used for a different request");
			// every name and value a part of its own: a value moved across a boundary is
			// another form
			assertProblem(send(app, method, "/transfers", key, FORM, body("amount=10%26to%3Dalice")), 422,
					"was already used for a different request");
			assertThat(counter.runs(method + " /transfers")).as(method).isEqualTo(1);
			assertThat(rows.status("", Idempotent.DEFAULT_POOL, key)).isEqualTo("completed");
		}
	}

	@Test
	void aFormNoFilterParsedIsFingerprintedByItsRawBytesAndItsHandlerReadsThem() throws Exception {
		String key = newKey();
		HttpResponse<String> first = send(bare, "PUT", "/notes", key, FORM, body("amount=10&to=alice"));
		assertThat(first.statusCode()).isEqualTo(200);
		assertThat(first.body()).endsWith("amount=10&to=alice");
		assertThat(send(bare, "PUT", "/notes", key, FORM, body("amount=10&to=alice")).headers()
			.firstValue("Idempotency-Replayed")).hasValue("true");
		assertProblem(send(bare, "PUT", "/notes", key, FORM, body("amount=9999&to=mallory")), 422,
				"was already used for a different request");
		assertThat(bareCounter.runs("PUT /notes")).isEqualTo(1);
	}

	@Test
	void aMultipartUploadReachesItsHandlerAndIsFingerprintedByItsParts() throws Exception {
		String key = newKey();
		Multipart upload = new Multipart().field("title", "invoice")
			.part("meta", null, "application/json", "{\"pages\":2}")
			.part("file", "invoice.pdf", "application/pdf", "%PDF-1 first");
		HttpResponse<String> first = send(app, "POST", "/documents", key, upload.contentType(), upload.body());
		assertThat(first.statusCode()).isEqualTo(200);
		assertThat(first.body()).isEqualTo("run 1: invoice {pages=2} invoice.pdf application/pdf %PDF-1 first");

		HttpResponse<String> again = send(app, "POST", "/documents", key, upload.contentType(), upload.body());
		assertThat(again.headers().firstValue("Idempotency-Replayed")).hasValue("true");
		assertThat(again.body()).isEqualTo(first.body());

		Multipart otherBytes = new Multipart().field("title", "invoice")
			.part("meta", null, "application/json", "{\"pages\":2}")
			.part("file", "invoice.pdf", "application/pdf", "%PDF-1 other");
		Multipart otherName = new Multipart().field("title", "invoice")
			.part("meta", null, "application/json", "{\"pages\":2}")
			.part("file", "invoice-2.pdf", "application/pdf", "%PDF-1 first");
		Multipart otherType = new Multipart().field("title", "invoice")
			.part("meta", null, "application/json", "{\"pages\":2}")
			.part("file", "invoice.pdf", "application/octet-stream", "%PDF-1 first");
		Multipart otherField = new Multipart().field("title", "receipt")
			.part("meta", null, "application/json", "{\"pages\":2}")
			.part("file", "invoice.pdf", "application/pdf", "%PDF-1 first");
		for (Multipart other : new Multipart[] { otherBytes, otherName, otherType, otherField }) {
			assertProblem(send(app, "POST", "/documents", key, other.contentType(), other.body()), 422,
					"was already used for a different request");
		}
		assertThat(counter.runs("POST /documents")).isEqualTo(1);
		assertThat(rows.row("", Idempotent.DEFAULT_POOL, key)).containsEntry("status", "completed")
			.containsEntry("response_status", 200);
	}

	@Test
	void whereTheContainerParsesNoMultipartTheRawUploadIsFingerprintedAndReachesTheHandler() throws Exception {
		String key = newKey();
		Multipart upload = new Multipart().part("file", "a.txt", "text/plain", "first");
		HttpResponse<String> first = send(bare, "POST", "/raw-uploads", key, upload.contentType(), upload.body());
		assertThat(first.statusCode()).isEqualTo(200);
		assertThat(first.body()).isEqualTo("run 1: " + upload.body().length + " bytes");
		assertThat(send(bare, "POST", "/raw-uploads", key, upload.contentType(), upload.body()).headers()
			.firstValue("Idempotency-Replayed")).hasValue("true");
		Multipart other = new Multipart().part("file", "a.txt", "text/plain", "other");
		assertProblem(send(bare, "POST", "/raw-uploads", key, other.contentType(), other.body()), 422,
				"was already used for a different request");
	}

	@Test
	void aRequestLargerThanTheLimitIs413BeforeItsHandlerRunsAndNothingIsStored() throws Exception {
		String json = "{\"note\":\"" + "x".repeat(LIMIT) + "\"}";
		String form = "note=" + "x".repeat(LIMIT);
		// every part within spring.servlet.multipart.max-file-size (2KB), together beyond
		// the limit
		Multipart upload = new Multipart().field("title", "big")
			.part("meta", null, "application/json", "{\"pad\":\"" + "x".repeat(1500) + "\"}")
			.part("file", "big-1.bin", "application/octet-stream", "x".repeat(1500))
			.part("file", "big-2.bin", "application/octet-stream", "x".repeat(1500));
		for (boolean chunked : new boolean[] { false, true }) {
			String what = chunked ? "chunked" : "with Content-Length";
			assertTooLarge(send(app, "POST", "/orders", newKey(), "application/json", body(json), chunked), what);
			assertTooLarge(send(app, "POST", "/transfers", newKey(), FORM, body(form), chunked), what);
			assertTooLarge(send(app, "PUT", "/transfers", newKey(), FORM, body(form), chunked), what);
			assertTooLarge(send(app, "POST", "/documents", newKey(), upload.contentType(), upload.body(), chunked),
					what);
			assertTooLarge(send(bare, "PUT", "/notes", newKey(), FORM, body(form), chunked), what);
		}
		assertThat(counter.runs()).isZero();
		assertThat(bareCounter.runs()).isZero();
	}

	@Test
	void aBodyTheContainerCannotParseIsAProblemBeforeItsHandlerRunsAndNothingIsStored() throws Exception {
		Multipart overFileSize = new Multipart().field("title", "big")
			.part("meta", null, "application/json", "{}")
			.part("file", "big.bin", "application/octet-stream", "x".repeat(3000));
		Multipart good = new Multipart().field("title", "t")
			.part("meta", null, "application/json", "{}")
			.part("file", "a.txt", "text/plain", "abc");
		byte[] truncated = java.util.Arrays.copyOf(good.body(), good.body().length - 10);
		for (boolean chunked : new boolean[] { false, true }) {
			assertRefused(
					send(app, "POST", "/documents", newKey(), overFileSize.contentType(), overFileSize.body(), chunked),
					413, "The multipart body of this request exceeds the server's limits");
			assertRefused(send(app, "POST", "/documents", newKey(), good.contentType(), truncated, chunked), 400,
					"The multipart body of this request could not be read: Stream ended unexpectedly");
			assertRefused(send(app, "POST", "/documents", newKey(), "multipart/form-data", good.body(), chunked), 400,
					"no multipart boundary was found");
		}
		// beyond Tomcat's own form limit (server.tomcat.max-http-form-post-size, 2MB),
		// sent without a length
		try (ConfigurableApplicationContext large = start("ductor.idempotency.max-request-size=10MB")) {
			assertRefused(
					send(large, "POST", "/transfers", newKey(), FORM,
							body("amount=1&to=" + "x".repeat(3 * 1024 * 1024)), true),
					413, "The form body of this request exceeds the server's limits");
			assertThat(large.getBean(Counter.class).runs()).isZero();
		}
		assertThat(counter.runs()).isZero();
	}

	@Test
	void aMultipartBodyOfAnotherSubtypeIsFingerprintedByItsPartsToo() throws Exception {
		String key = newKey();
		Multipart bundle = new Multipart().field("a", "first");
		String mixed = bundle.contentType().replace("form-data", "mixed");
		HttpResponse<String> first = send(app, "POST", "/bundles", key, mixed, bundle.body());
		assertThat(first.statusCode()).isEqualTo(200);
		assertThat(first.body()).isEqualTo("run 1: first");
		assertThat(
				send(app, "POST", "/bundles", key, mixed, bundle.body()).headers().firstValue("Idempotency-Replayed"))
			.hasValue("true");
		assertProblem(send(app, "POST", "/bundles", key, mixed, new Multipart().field("a", "other").body()), 422,
				"was already used for a different request");
	}

	@Test
	void aRequestOfExactlyTheLimitIsAccepted() throws Exception {
		String padding = "x".repeat(LIMIT - "{\"note\":\"\"}".length());
		byte[] json = body("{\"note\":\"" + padding + "\"}");
		assertThat(json).hasSize(LIMIT);
		assertThat(send(app, "POST", "/orders", newKey(), "application/json", json).statusCode()).isEqualTo(200);
		assertThat(send(app, "POST", "/orders", newKey(), "application/json", json, true).statusCode()).isEqualTo(200);
		assertThat(send(app, "POST", "/orders", newKey(), "application/json", body("{\"note\":\"" + padding + "x\"}"),
				true)
			.statusCode()).isEqualTo(413);
	}

	@Test
	void jsonBodiesAndParsedFormsKeepTheFingerprintsOfEarlierReleases() throws Exception {
		// SHA-256 over "4:POST7:/orders21:{\"customer\":\"pinned\"}", as the first
		// release computed it
		String key = newKey();
		send(app, "POST", "/orders", key, "application/json", body("{\"customer\":\"pinned\"}"));
		assertThat(rows.row("", Idempotent.DEFAULT_POOL, key)).containsEntry("request_fingerprint",
				"709c9462bd04fed9e9d167003dc7ba91dbac1d53d777dcbb0e9d6f669fbe15f6");
		String form = newKey();
		send(app, "POST", "/transfers", form, FORM, body("to=alice&amount=10"));
		assertThat(rows.row("", Idempotent.DEFAULT_POOL, form)).containsEntry("request_fingerprint",
				"dfdb64ef590071e57136ec67f1ad5403570490c42e2bac38cc98c67210a3a785");
	}

	private static final String FORM = MediaType.APPLICATION_FORM_URLENCODED_VALUE;

	private static void assertTooLarge(HttpResponse<String> response, String what) {
		assertThat(response.statusCode()).as(response.uri() + " " + what).isEqualTo(413);
		assertThat(response.headers().firstValue("Content-Type")).hasValue("application/problem+json");
		assertThat(response.body()).contains("\"status\":413")
			.contains("an @Idempotent endpoint accepts at most " + LIMIT + " bytes")
			.contains("ductor.idempotency.max-request-size");
		String key = response.request().headers().firstValue("Idempotency-Key").orElseThrow();
		assertThat(rows.count("idempotency_key = ?", key)).as(what).isZero();
	}

	private static void assertRefused(HttpResponse<String> response, int status, String detail) {
		assertProblem(response, status, detail);
		String key = response.request().headers().firstValue("Idempotency-Key").orElseThrow();
		assertThat(rows.count("idempotency_key = ?", key)).isZero();
	}

	private static void assertProblem(HttpResponse<String> response, int status, String detail) {
		assertThat(response.statusCode()).isEqualTo(status);
		assertThat(response.headers().firstValue("Content-Type")).hasValue("application/problem+json");
		assertThat(response.body()).contains("\"status\":" + status).contains(detail);
	}

	static String newKey() {
		return UUID.randomUUID().toString();
	}

	static byte[] body(String text) {
		return text.getBytes(StandardCharsets.UTF_8);
	}

	static HttpResponse<String> send(ConfigurableApplicationContext context, String method, String path, String key,
			String contentType, byte[] body) throws Exception {
		return send(context, method, path, key, contentType, body, false);
	}

	/**
	 * {@code chunked}: no Content-Length, so the server learns the size only by reading.
	 */
	static HttpResponse<String> send(ConfigurableApplicationContext context, String method, String path, String key,
			String contentType, byte[] body, boolean chunked) throws Exception {
		HttpRequest.BodyPublisher publisher = chunked
				? HttpRequest.BodyPublishers.ofInputStream(() -> new ByteArrayInputStream(body))
				: HttpRequest.BodyPublishers.ofByteArray(body);
		String base = "http://localhost:" + context.getEnvironment().getProperty("local.server.port");
		return http.send(HttpRequest.newBuilder(URI.create(base + path))
			.timeout(Duration.ofSeconds(60))
			.header("Content-Type", contentType)
			.header("Idempotency-Key", key)
			.method(method, publisher)
			.build(), HttpResponse.BodyHandlers.ofString());
	}

	/**
	 * A multipart/form-data body, written by hand so that every header of every part is
	 * the test's.
	 */
	static final class Multipart {

		private static final String BOUNDARY = "ductor-boundary-7MA4YWxkTrZu0gW";

		private final ByteArrayOutputStream body = new ByteArrayOutputStream();

		Multipart field(String name, String value) {
			return part(name, null, null, value);
		}

		Multipart part(String name, String filename, String contentType, String content) {
			StringBuilder head = new StringBuilder("--" + BOUNDARY + "\r\n");
			head.append("Content-Disposition: form-data; name=\"").append(name).append('"');
			if (filename != null) {
				head.append("; filename=\"").append(filename).append('"');
			}
			head.append("\r\n");
			if (contentType != null) {
				head.append("Content-Type: ").append(contentType).append("\r\n");
			}
			head.append("\r\n");
			this.body.writeBytes(IdempotentRequestBodyHttpTest.body(head.toString()));
			this.body.writeBytes(IdempotentRequestBodyHttpTest.body(content));
			this.body.writeBytes(IdempotentRequestBodyHttpTest.body("\r\n"));
			return this;
		}

		String contentType() {
			return "multipart/form-data; boundary=" + BOUNDARY;
		}

		byte[] body() {
			ByteArrayOutputStream complete = new ByteArrayOutputStream();
			complete.writeBytes(this.body.toByteArray());
			complete.writeBytes(IdempotentRequestBodyHttpTest.body("--" + BOUNDARY + "--\r\n"));
			return complete.toByteArray();
		}

	}

	/** Handler runs per endpoint. */
	static final class Counter {

		private final Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();

		void reset() {
			this.runs.clear();
		}

		int run(String endpoint) {
			return this.runs.computeIfAbsent(endpoint, (e) -> new AtomicInteger()).incrementAndGet();
		}

		int runs(String endpoint) {
			return this.runs.computeIfAbsent(endpoint, (e) -> new AtomicInteger()).get();
		}

		int runs() {
			return this.runs.values().stream().mapToInt(AtomicInteger::get).sum();
		}

	}

	@RestController
	static class BodiesController {

		private final Counter counter;

		BodiesController(Counter counter) {
			this.counter = counter;
		}

		@RequestMapping(path = "/transfers", consumes = MediaType.APPLICATION_FORM_URLENCODED_VALUE,
				method = { RequestMethod.POST, RequestMethod.PUT, RequestMethod.PATCH, RequestMethod.DELETE })
		@Idempotent
		String transfer(@RequestParam String amount, @RequestParam String to,
				jakarta.servlet.http.HttpServletRequest request) {
			return "run " + this.counter.run(request.getMethod() + " /transfers") + ": " + request.getMethod() + " "
					+ amount + " to " + to;
		}

		@PutMapping("/notes")
		@Idempotent
		String note(@RequestBody String body) {
			return "run " + this.counter.run("PUT /notes") + ": " + body;
		}

		@PostMapping(path = "/documents", consumes = MediaType.MULTIPART_FORM_DATA_VALUE)
		@Idempotent
		String upload(@RequestParam String title, @RequestPart("meta") Map<String, Object> meta,
				@RequestParam("file") MultipartFile file) throws java.io.IOException {
			return "run " + this.counter.run("POST /documents") + ": " + title + " " + meta + " "
					+ file.getOriginalFilename() + " " + file.getContentType() + " "
					+ new String(file.getBytes(), StandardCharsets.UTF_8);
		}

		@PostMapping(path = "/bundles", consumes = "multipart/mixed")
		@Idempotent
		String bundle(@RequestPart("a") String a) {
			return "run " + this.counter.run("POST /bundles") + ": " + a;
		}

		@PostMapping("/raw-uploads")
		@Idempotent
		String rawUpload(@RequestBody byte[] body) {
			return "run " + this.counter.run("POST /raw-uploads") + ": " + body.length + " bytes";
		}

		@PostMapping("/orders")
		@Idempotent
		String order(@RequestBody Map<String, Object> order) {
			return "run " + this.counter.run("POST /orders");
		}

	}

	@SpringBootConfiguration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	@Import(BodiesController.class)
	static class BodiesApplication {

		@Bean
		Counter counter() {
			return new Counter();
		}

	}

}
