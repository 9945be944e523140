package io.ductor.actuate;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.zip.GZIPOutputStream;

import javax.sql.DataSource;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import tools.jackson.core.type.TypeReference;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.simple.JdbcClient;

import io.ductor.test.PostgresExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Decisions with a reason through {@code POST /actuator/ductor…}, and the filters and
 * lookups the console reads, judged on the rows.
 */
class DuctorEndpointDecisionHttpTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	static ConfigurableApplicationContext app;

	static HttpClient http;

	static String base;

	static JdbcClient jdbc;

	@BeforeAll
	static void start() {
		app = new SpringApplicationBuilder(EndpointApplication.class).properties(postgres.springProperties())
			.properties("server.port=0", "management.endpoints.web.exposure.include=ductor",
					"ductor.effects.drainer.enabled=false", "ductor.effects.reconciler.enabled=false",
					"ductor.retention.enabled=false", "ductor.idempotency.sweeper.enabled=false")
			.run();
		base = "http://localhost:" + app.getEnvironment().getProperty("local.server.port") + "/actuator/ductor";
		http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
		jdbc = JdbcClient.create(app.getBean(DataSource.class));
	}

	@AfterAll
	static void stop() {
		app.close();
	}

	@Test
	void aDecisionWithAReasonIsStoredWithWhoAndWhenAndARefusedOneStoresNothing() throws Exception {
		long parked = insert("mail.send", "decide-1", "needs_decision");
		long done = insert("mail.send", "decide-2", "completed");
		HttpResponse<String> ok = post("/" + parked,
				"{\"action\":\"resolve\",\"resolution\":\"mark_done\",\"reason\":\"seen in the relay log\"}");
		assertThat(ok.statusCode()).isEqualTo(200);
		assertThat(decision(parked)).containsEntry("status", "completed")
			.containsEntry("decision_reason", "seen in the relay log")
			.containsEntry("decided_by", "anonymous")
			.containsEntry("stamped", true);
		assertThat(post("/" + done, "{\"action\":\"cancel\",\"reason\":\"too late\"}").statusCode()).isEqualTo(409);
		assertThat(decision(done)).containsEntry("status", "completed").containsEntry("decision_reason", null);
		assertThat(post("/" + parked, "{\"action\":\"retry\",\"reason\":\"two\\nlines\"}").statusCode()).isEqualTo(400);
		HttpResponse<String> details = get("/intents/" + parked);
		assertThat(details.body()).contains("\"decisionReason\":\"seen in the relay log\"")
			.contains("\"decidedBy\":\"anonymous\"");
		assertThat(get("/intents/999999").statusCode()).isEqualTo(404);
	}

	@Test
	void anIntentsPageNamesTheTraceItWasRecordedInAndNothingWithoutOne() throws Exception {
		long traced = insert("trace.mail", "trace-1", "failed");
		long untraced = insert("trace.mail", "trace-2", "failed");
		jdbc.sql("UPDATE eec_effect_intent SET trace_context = ?::jsonb WHERE id = ?")
			.params("{\"traceparent\":\"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01\"}", traced)
			.update();
		assertThat(get("/intents/" + traced).body()).contains("\"traceId\":\"4bf92f3577b34da6a3ce929d0e0e4736\"");
		assertThat(get("/intents/" + untraced).body()).contains("\"traceId\":null");
	}

	@Test
	void aBulkDecisionMovesEachIntentParkedAtItsStartOnceStoringTheReasonAndLeavesOtherEffectsAlone() throws Exception {
		List<Long> mails = List.of(insert("bulk.mail", "b-1", "failed"), insert("bulk.mail", "b-2", "failed"),
				insert("bulk.mail", "b-3", "failed"));
		long sms = insert("bulk.sms", "b-4", "failed");
		long undecided = insert("bulk.mail", "b-5", "needs_decision");
		HttpResponse<String> response = post("",
				"{\"effect\":\"bulk.mail\",\"status\":\"failed\",\"action\":\"cancel\",\"reason\":\"partner gone\"}");
		assertThat(response.statusCode()).isEqualTo(200);
		assertThat(response.body()).contains("\"moved\":3").contains("\"skipped\":0");
		for (long id : mails) {
			assertThat(decision(id)).containsEntry("status", "cancelled")
				.containsEntry("decision_reason", "partner gone");
		}
		assertThat(decision(sms)).containsEntry("status", "failed").containsEntry("decision_reason", null);
		assertThat(decision(undecided)).containsEntry("status", "needs_decision");
	}

	@Test
	void filtersPageByIdAsTheDatabaseOrdersThem() throws Exception {
		// creation times rise with the ids, as the database writes them
		jdbc.sql("DELETE FROM eec_effect_intent").update();
		jdbc.sql("""
				INSERT INTO eec_effect_intent (effect_name, idempotency_key, payload, payload_fingerprint, status,
				                               run_id, created_at)
				SELECT (ARRAY['page.a', 'page.b'])[1 + n % 2], 'page-' || n, '[]', 'f',
				       CASE WHEN n % 3 = 0 THEN 'failed' ELSE 'pending' END, 'run-' || (n % 5),
				       timestamptz '2026-01-01 00:00:00Z' + n * interval '1 minute'
				FROM generate_series(1, 300) AS n""").update();
		List<Long> expected = jdbc
			.sql("SELECT id FROM eec_effect_intent WHERE status = 'failed' "
					+ "AND effect_name = 'page.a' AND run_id = 'run-2' ORDER BY id")
			.query(Long.class)
			.list();
		String first = get("/failed?effect=page.a&run=run-2&limit=5").body();
		String second = get("/failed?effect=page.a&run=run-2&limit=5&afterId=" + expected.get(4)).body();
		for (int i = 0; i < 10; i++) {
			assertThat((i < 5) ? first : second).contains("\"id\":" + expected.get(i) + ",");
		}
		assertThat(first).doesNotContain("\"id\":" + expected.get(5) + ",");
		long inRange = jdbc
			.sql("SELECT count(*) FROM eec_effect_intent WHERE effect_name LIKE 'page.%' "
					+ "AND created_at >= '2026-01-01 01:00:00Z' AND created_at < '2026-01-01 01:10:00Z'")
			.query(Long.class)
			.single();
		String range = get("/all?from=2026-01-01T01:00:00Z&to=2026-01-01T01:10:00Z&limit=100").body();
		assertThat(range.split("\"effectName\"", -1)).hasSize((int) inRange + 1);
		assertThat(windowIds("/all?from=2026-01-01T01:00:00Z&to=2026-01-01T01:10:00Z&limit=5&afterId="
				+ windowIds("/all?from=2026-01-01T01:00:00Z&to=2026-01-01T01:10:00Z&limit=5").get(4)))
			.isEqualTo(expectedIds("created_at >= '2026-01-01 01:00:00Z' AND created_at < '2026-01-01 01:10:00Z'")
				.subList(5, 10));
		assertThat(windowIds("/failed?from=2026-01-01T02:00:00Z&to=2026-01-01T03:00:00Z&limit=100"))
			.isEqualTo(expectedIds(
					"status = 'failed' AND created_at >= '2026-01-01 02:00:00Z' AND created_at < '2026-01-01 03:00:00Z'"));
		assertThat(windowIds("/pending?to=2026-01-01T00:30:00Z&limit=100"))
			.isEqualTo(expectedIds("status = 'pending' AND created_at < '2026-01-01 00:30:00Z'"));
		assertThat(windowIds("/all?from=2026-01-01T04:50:00Z&limit=100"))
			.isEqualTo(expectedIds("created_at >= '2026-01-01 04:50:00Z'"));
		assertThat(windowIds("/all?from=2026-01-01T04:59:30Z&to=2026-01-01T05:00:30Z&limit=100"))
			.isEqualTo(expectedIds("created_at >= '2026-01-01 04:59:30Z' AND created_at < '2026-01-01 05:00:30Z'"))
			.hasSize(1);
		assertThat(windowIds("/all?from=2025-01-01T00:00:00Z&to=2025-12-31T00:00:00Z")).isEmpty();
		assertThat(windowIds("/all?from=2027-01-01T00:00:00Z")).isEmpty();
		jdbc.sql("UPDATE eec_effect_intent SET status = 'in_flight', lease_owner = 'drainer-1', "
				+ "lease_expires_at = now() + interval '1 minute' WHERE status = 'pending' AND id % 7 = 0")
			.update();
		List<Long> inFlight = expectedIds("status = 'in_flight'");
		assertThat(inFlight).hasSizeGreaterThan(6);
		assertThat(windowIds("/in_flight?limit=5&afterId=" + inFlight.get(0))).isEqualTo(inFlight.subList(1, 6));
		assertThat(windowIds("/in_flight?from=2026-01-01T02:00:00Z&to=2026-01-01T03:00:00Z&limit=100"))
			.isEqualTo(expectedIds(
					"status = 'in_flight' AND created_at >= '2026-01-01 02:00:00Z' AND created_at < '2026-01-01 03:00:00Z'"));
		assertThat(get("/all?key=page-7").body()).contains("\"idempotencyKey\":\"page-7\"").doesNotContain("page-70");
		assertThat(get("/all?from=yesterday").statusCode()).isEqualTo(400);
		assertThat(get("/lost").statusCode()).as("no such status").isEqualTo(400);
		assertThat(get("/keys/nothing?tenant=t&pool=p").statusCode()).isEqualTo(404);
	}

	@Test
	void aKeyLookupShowsEveryStoredBodyBinaryOnesAsBase64AndTextCutAtACharacter() throws Exception {
		byte[] png = { (byte) 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0, 0, 0, 13, 'I', 'H', 'D', 'R' };
		storeKey("png", "image/png", null, png);
		ByteArrayOutputStream compressed = new ByteArrayOutputStream();
		try (GZIPOutputStream gzip = new GZIPOutputStream(compressed)) {
			gzip.write("{\"id\":\"order-1\"}".getBytes(StandardCharsets.UTF_8));
		}
		storeKey("gzip", "application/json", "gzip", compressed.toByteArray());
		// the 2,000-byte preview ends inside the two bytes of the é
		storeKey("cut", "text/plain;charset=UTF-8", null,
				("x".repeat(1999) + "é and more").getBytes(StandardCharsets.UTF_8));
		storeKey("json", "application/json", null,
				"{\"total\":1234567890.123456789,\"name\":\"Zoë\"}".getBytes(StandardCharsets.UTF_8));

		Map<String, Object> image = keyLookup("png");
		assertThat(image).containsEntry("responseContentType", "image/png")
			.containsEntry("responseBodySize", png.length)
			.containsEntry("responseBodyEncoding", "base64")
			.containsEntry("responseBodyStart", Base64.getEncoder().encodeToString(png))
			.containsEntry("responseBodyTruncated", false);
		assertThat(keyLookup("gzip")).containsEntry("responseBodyEncoding", "base64")
			.containsEntry("responseBodyStart", Base64.getEncoder().encodeToString(compressed.toByteArray()));
		assertThat(keyLookup("cut")).containsEntry("responseBodyEncoding", "text")
			.containsEntry("responseBodyStart", "x".repeat(1999))
			.containsEntry("responseBodySize", 2010)
			.containsEntry("responseBodyTruncated", true);
		assertThat(keyLookup("json")).containsEntry("responseBodyEncoding", "text")
			.containsEntry("responseBodyStart", "{\"total\":1234567890.123456789,\"name\":\"Zoë\"}");
	}

	@Test
	void everyKeyIsFoundByTheQueryFormAndASimpleKeyByThePathToo() throws Exception {
		// every visible ASCII character may be in a key, and a key has up to 255 of them
		List<String> keys = List.of("orders/2026/7", "a;b", "50%off?x=1#frag&y=2", "+plus+", "..", "k".repeat(255),
				"\\back\\slash");
		for (String key : keys) {
			storeKey(key, "text/plain", null, ("answer for " + key).getBytes(StandardCharsets.UTF_8));
			String encoded = java.net.URLEncoder.encode(key, StandardCharsets.UTF_8);
			HttpResponse<String> found = get("/keys?key=" + encoded + "&tenant=acme&pool=http");
			assertThat(found.statusCode()).as(key + ": " + found.body()).isEqualTo(200);
			Map<String, Object> record = JsonMapper.builder().build().readValue(found.body(), new TypeReference<>() {
			});
			assertThat(record).as(key)
				.containsEntry("key", key)
				.containsEntry("responseBodyStart", "answer for " + key);
			// the pool of @Idempotent handlers when none is named
			assertThat(get("/keys?key=" + encoded + "&tenant=acme").statusCode()).as(key).isEqualTo(200);
		}
		assertThat(get("/keys?key=nothing&tenant=acme").statusCode()).isEqualTo(404);
		assertThat(get("/keys?key=orders/2026/7").statusCode()).as("another tenant's key").isEqualTo(404);
		HttpResponse<String> noKey = get("/keys?tenant=acme");
		assertThat(noKey.statusCode()).isEqualTo(400);
		assertThat(noKey.body()).contains("key");
		assertThat(get("/keys?key=" + "k".repeat(256) + "&tenant=acme").statusCode()).isEqualTo(400);
		// a simple key by its path, as before
		assertThat(keyLookup("+plus+")).containsEntry("key", "+plus+");
		assertThat(get("/keys/" + "k".repeat(255) + "?tenant=acme").statusCode()).isEqualTo(200);
	}

	private static void storeKey(String key, String contentType, String contentEncoding, byte[] body) {
		String headers = "{\"Content-Type\":[\"" + contentType + "\"]"
				+ ((contentEncoding != null) ? ",\"Content-Encoding\":[\"" + contentEncoding + "\"]" : "") + "}";
		jdbc.sql("""
				INSERT INTO eec_routing_idempotency (tenant_scope, pool_id, idempotency_key, status,
				    request_fingerprint, owner_token, decision_id, response_status, response_headers, response_body,
				    expires_at)
				VALUES ('acme', 'http', ?, 'completed', 'fp', gen_random_uuid(), 'd', 200, CAST(? AS jsonb), ?,
				        now() + interval '1 day')""").params(key, headers, body).update();
	}

	private static Map<String, Object> keyLookup(String key) throws Exception {
		HttpResponse<String> response = get("/keys/" + key + "?tenant=acme&pool=http");
		assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
		return JsonMapper.builder().build().readValue(response.body(), new TypeReference<Map<String, Object>>() {
		});
	}

	private static List<Long> windowIds(String path) throws IOException, InterruptedException {
		HttpResponse<String> response = get(path);
		assertThat(response.statusCode()).isEqualTo(200);
		Matcher id = Pattern.compile("\"id\":(\\d+),").matcher(response.body());
		List<Long> ids = new ArrayList<>();
		while (id.find()) {
			ids.add(Long.parseLong(id.group(1)));
		}
		return ids;
	}

	private static List<Long> expectedIds(String condition) {
		return jdbc.sql("SELECT id FROM eec_effect_intent WHERE " + condition + " ORDER BY id")
			.query(Long.class)
			.list();
	}

	private static long insert(String effect, String key, String status) {
		return jdbc.sql("""
				INSERT INTO eec_effect_intent (effect_name, idempotency_key, payload, payload_fingerprint, status,
				                               attempts, max_attempts, finished_at)
				VALUES (?, ?, '[]', 'f', ?, 1, 1, CASE WHEN ? IN ('completed', 'failed') THEN now() END)
				RETURNING id""").params(effect, key, status, status).query(Long.class).single();
	}

	private static Map<String, Object> decision(long id) {
		return jdbc
			.sql("SELECT status, decision_reason, decided_by, decided_at IS NOT NULL AS stamped "
					+ "FROM eec_effect_intent WHERE id = ?")
			.param(id)
			.query()
			.singleRow();
	}

	static HttpResponse<String> get(String path) throws IOException, InterruptedException {
		return http.send(HttpRequest.newBuilder(URI.create(base + path)).GET().build(),
				HttpResponse.BodyHandlers.ofString());
	}

	static HttpResponse<String> post(String path, String json) throws IOException, InterruptedException {
		return http.send(HttpRequest.newBuilder(URI.create(base + path))
			.header("Content-Type", "application/json")
			.POST(HttpRequest.BodyPublishers.ofString(json))
			.build(), HttpResponse.BodyHandlers.ofString());
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	static class EndpointApplication {

	}

}
