package io.ductor.console;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import tools.jackson.core.type.TypeReference;
import tools.jackson.databind.json.JsonMapper;

import io.ductor.test.PostgresExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the {@code ductor} endpoint shows of an intent's arguments once
 * {@code ductor.console.hidden-fields} hides some, over real HTTP: the hidden values at
 * any depth, and every other value exactly as stored.
 */
class HiddenFieldsHttpTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	static ConsoleApp app;

	@BeforeAll
	static void start() {
		app = ConsoleApp.start(postgres, ConsoleApp.Open.class, ConsoleApp.WITHOUT_SECURITY);
	}

	@AfterAll
	static void stop() {
		app.close();
	}

	@Test
	void hiddenFieldsAreHiddenAndEveryOtherValueIsShownExactlyAsStored() throws Exception {
		long id = app.park("payment.charge", "charge:order-5", "needs_decision",
				"""
						[{"order": "order-5", "cardNumber": "4111111111111111", "total": 1234567890.123456789,
						  "rate": 0.30000000000000000001, "count": 123456789012345678901234567890, "tiny": 1e-7,
						  "lines": [{"sku": "book-1", "price": 19.90, "cardNumber": {"last4": "1111"}}], "note": "é, \\"quoted\\": {x}"},
						 "second argument", 42, null, true]""",
				null);
		String stored = app.jdbc.sql("SELECT payload::text FROM eec_effect_intent WHERE id = ?")
			.param(id)
			.query(String.class)
			.single();

		HttpResponse<String> response = HttpClient.newHttpClient()
			.send(HttpRequest.newBuilder(URI.create(app.url("/actuator/ductor/intents/" + id))).build(),
					HttpResponse.BodyHandlers.ofString());
		assertThat(response.statusCode()).isEqualTo(200);
		Map<String, Object> answer = JsonMapper.builder()
			.build()
			.readValue(response.body(), new TypeReference<Map<String, Object>>() {
			});
		String shown = (String) ((Map<?, ?>) answer.get("intent")).get("payloadJson");

		assertThat(shown).doesNotContain("4111")
			.doesNotContain("1111")
			.contains("\"cardNumber\":\"[hidden]\"", "1234567890.123456789", "0.30000000000000000001",
					"123456789012345678901234567890", "0.0000001", "19.90");
		// nothing else changed: the stored arguments with the two values replaced
		assertThat(shown).isEqualTo(compact(stored.replace("\"4111111111111111\"", "\"[hidden]\"")
			.replace("{\"last4\": \"1111\"}", "\"[hidden]\"")));
	}

	@Test
	void theAlarmAndSlotViewsShowNoArguments() throws Exception {
		app.jdbc
			.sql("""
					INSERT INTO eec_recurring_alarm (name, effect_name, every_ms, zone, payload, payload_fingerprint, missed,
					                                 grace_ms, declared_in, next_at, created_at, updated_at)
					VALUES ('card-sweep', 'payment.sweep', 60000, 'UTC', '[{"cardNumber": "4111111111111111"}]', 'f',
					        'run_once', 60000, 'api', now() + interval '1 hour', now(), now())""")
			.update();
		app.jdbc
			.sql("""
					INSERT INTO eec_effect_intent (effect_name, idempotency_key, payload, payload_fingerprint, alarm_name)
					VALUES ('payment.retry', 'alarm:card-retry:1', '[{"cardNumber": "4111111111111111"}]', 'f', 'card-retry')""")
			.update();
		HttpClient http = HttpClient.newHttpClient();
		for (String path : List.of("/actuator/ductor/alarms/recurring", "/actuator/ductor/alarms/one-shot",
				"/actuator/ductor/slots", "/actuator/ductor")) {
			HttpResponse<String> response = http.send(HttpRequest.newBuilder(URI.create(app.url(path))).build(),
					HttpResponse.BodyHandlers.ofString());
			assertThat(response.statusCode()).isEqualTo(200);
			assertThat(response.body()).as(path).doesNotContain("4111");
		}
	}

	/** The JSON text without the blanks between its tokens. */
	static String compact(String json) {
		StringBuilder compact = new StringBuilder();
		boolean inString = false;
		boolean escaped = false;
		for (char c : json.toCharArray()) {
			if (inString) {
				if (escaped) {
					escaped = false;
				}
				else if (c == '\\') {
					escaped = true;
				}
				else if (c == '"') {
					inString = false;
				}
			}
			else if (c == '"') {
				inString = true;
			}
			else if (Character.isWhitespace(c)) {
				continue;
			}
			compact.append(c);
		}
		return compact.toString();
	}

}
