package io.ductor.console;

import java.util.Map;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.ductor.test.PostgresExtension;
import io.ductor.test.browser.Browser;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The console in a real headless Chromium on an application without Spring Security: an
 * operator opens it, finds a parked intent, resolves it with a reason, and the database
 * shows the decision; the run and idempotency key pages show what is stored.
 */
class ConsoleBrowserTest {

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
	void anOperatorResolvesAParkedIntentWithAReasonAndTheDatabaseKeepsWhoWhenAndWhy() {
		app.jdbc
			.sql("INSERT INTO eec_run (id, type, status, state) VALUES ('order-7', 'order', 'active', "
					+ "'{\"step\":\"receipt\",\"total\":4200}')")
			.update();
		app.jdbc
			.sql("INSERT INTO eec_run_transition (run_id, seq, stamp, input, record_version, run_status) "
					+ "VALUES ('order-7', 1, 'placed', '{\"sku\":\"book-2\"}', 2, 'active'), "
					+ "('order-7', 2, 'paid', NULL, 3, 'active')")
			.update();
		app.jdbc.sql("UPDATE eec_run SET record_version = 3, last_transition_seq = 2 WHERE id = 'order-7'").update();
		long parked = app.park("receipt.send", "receipt:order-7", "needs_decision",
				"[{\"order\":\"order-7\",\"email\":\"heidi@example.org\",\"cardNumber\":\"4111111111111111\","
						+ "\"total\":1234567890.123456789}]",
				"order-7");
		app.park("payment.charge", "charge:order-9", "failed", "[{\"order\":\"order-9\",\"amount\":1200}]", null);
		app.jdbc.sql("""
				INSERT INTO eec_effect_intent (effect_name, idempotency_key, payload, payload_fingerprint, status,
				                               attempts, max_attempts, next_attempt_at, finished_at)
				SELECT 'receipt.send', 'done-' || n, '[]', 'f', 'completed', 1, 3,
				       now() - n * interval '41 seconds' - interval '300 ms', now() - n * interval '41 seconds'
				FROM generate_series(1, 400) AS n""").update();

		java.time.OffsetDateTime before = app.jdbc.sql("SELECT now()").query(java.time.OffsetDateTime.class).single();
		try (Browser browser = Browser.launch(1280, 800)) {
			browser.open(app.url("/ductor"));
			assertThat(browser.evaluate("document.title")).isEqualTo("Ductor console");
			browser.find("#overview");
			assertThat(browser.text("[data-card=needs_decision] .value")).isEqualTo("1");
			assertThat(browser.text("#parked tr[data-effect='receipt.send'][data-status=needs_decision] td.num"))
				.isEqualTo("1");
			assertThat(browser.text("#parked tr[data-effect='payment.charge'][data-status=failed] td.num"))
				.isEqualTo("1");
			assertThat(browser.evaluate("document.querySelectorAll('#throughput-chart rect.bar').length"))
				.isEqualTo(15L);
			browser.screenshot(ConsoleApp.screenshot("console-overview.png"));

			browser.click("#parked tr[data-status=needs_decision] a");
			browser.click("#intents tr[data-intent-id='" + parked + "'] a");
			browser.find("#intent-page[data-intent-id='" + parked + "']");
			String arguments = (String) browser.text("#arguments");
			assertThat(arguments).contains("\"email\": \"heidi@example.org\"")
				.contains("\"cardNumber\": \"[hidden]\"")
				.contains("\"total\": 1234567890.123456789")
				.doesNotContain("4111");
			assertThat(browser.text("[data-field=ordering_key]")).isEqualTo("customer-receipt:order-7");

			browser.click("button[data-action=mark_done]");
			browser.fill("#confirm-reason", "receipt seen in the relay's log, ticket OPS-41");
			browser.click("#confirm-ok");
			browser.find("#action-done");
			assertThat(browser.evaluate("document.querySelector('#intent-page').dataset.status"))
				.isEqualTo("completed");
			assertThat(browser.text("[data-field=decided_by]")).isEqualTo("anonymous");
			browser.screenshot(ConsoleApp.screenshot("console-intent.png"));
		}
		Map<String, Object> row = app.jdbc
			.sql("SELECT status, decision_reason, decided_by, decided_at IS NOT NULL AS stamped, "
					+ "decided_at >= ? AND decided_at <= now() AS recent FROM eec_effect_intent WHERE id = ?")
			.params(before, parked)
			.query()
			.singleRow();
		assertThat(row).containsEntry("status", "completed")
			.containsEntry("decision_reason", "receipt seen in the relay's log, ticket OPS-41")
			.containsEntry("decided_by", "anonymous")
			.containsEntry("recent", true);
	}

	@Test
	void theRunAndKeyPagesShowTheRunsHistoryEffectsAndTheStoredResponse() {
		app.jdbc
			.sql("INSERT INTO eec_run (id, type, status, state, record_version, last_transition_seq) "
					+ "VALUES ('trip-3', 'trip', 'active', '{\"legs\":2}', 2, 1)")
			.update();
		app.jdbc
			.sql("INSERT INTO eec_run_transition (run_id, seq, stamp, input, record_version, run_status) "
					+ "VALUES ('trip-3', 1, 'booked', '{\"leg\":1}', 2, 'active')")
			.update();
		long hotel = app.park("hotel.book", "hotel:trip-3", "failed", "[{\"trip\":\"trip-3\"}]", "trip-3");
		app.jdbc
			.sql("""
					INSERT INTO eec_routing_idempotency (tenant_scope, pool_id, idempotency_key, status, request_fingerprint,
					    owner_token, decision_id, response_status, response_headers, response_body, expires_at)
					VALUES ('acme', 'orders', 'order-key-1', 'completed', 'fp', gen_random_uuid(), 'order-11', 201,
					        '{"Content-Type":["application/json"]}', convert_to('{"id":"order-11","total":4200}', 'UTF8'),
					        now() + interval '1 day')""")
			.update();
		app.jdbc
			.sql("""
					INSERT INTO eec_routing_idempotency (tenant_scope, pool_id, idempotency_key, status, request_fingerprint,
					    owner_token, decision_id, response_status, response_headers, response_body, expires_at)
					VALUES ('acme', 'http', 'receipt-png', 'completed', 'fp', gen_random_uuid(), 'receipt-1', 200,
					        '{"Content-Type":["image/png"]}', '\\x89504e470d0a1a0a'::bytea, now() + interval '1 day')""")
			.update();

		app.jdbc
			.sql("""
					INSERT INTO eec_routing_idempotency (tenant_scope, pool_id, idempotency_key, status, request_fingerprint,
					    owner_token, decision_id, response_status, response_headers, response_body, expires_at)
					VALUES ('acme', 'orders', 'orders/2026/7;v=2%', 'completed', 'fp', gen_random_uuid(), 'order-12', 201,
					        '{"Content-Type":["application/json"]}', convert_to('{"id":"order-12"}', 'UTF8'),
					        now() + interval '1 day')""")
			.update();

		try (Browser browser = Browser.launch(1280, 800)) {
			browser.open(app.url("/ductor/#/runs"));
			browser.fill("#run-type", "trip");
			browser.click("#run-search button[type=submit]");
			browser.click("#runs tr[data-run-id='trip-3'] a");
			browser.find("#run-page[data-run-id='trip-3']");
			assertThat(browser.evaluate("document.querySelectorAll('#transitions tr').length")).isEqualTo(2L);
			assertThat(browser.text("#run-effects")).contains(String.valueOf(hotel)).contains("hotel:trip-3");
			assertThat(browser.text("#run-state")).contains("\"legs\": 2");
			browser.screenshot(ConsoleApp.screenshot("console-run.png"));

			browser.open(app.url("/ductor/#/keys"));
			browser.fill("#key-tenant", "acme");
			browser.fill("#key-pool", "orders");
			browser.fill("#key-key", "order-key-1");
			browser.click("#key-search button[type=submit]");
			browser.find("#key-record[data-key='order-key-1'][data-status=completed]");
			assertThat(browser.text("#key-record")).contains("order-11").contains("201");
			assertThat(browser.text("#key-body")).contains("\"total\": 4200");
			browser.screenshot(ConsoleApp.screenshot("console-key.png"));

			// a binary answer in the pool of @Idempotent handlers, found without naming
			// it
			// (only the hash changes: the last key's record stays until this one is
			// there)
			browser.open(app.url("/ductor/#/keys?tenant=acme&key=receipt-png"));
			browser.find("#key-record[data-key='receipt-png'][data-status=completed]");
			assertThat(browser.text("#key-record")).contains("8 bytes of image/png, binary");
			assertThat(browser.evaluate("document.querySelector('#key-body').dataset.encoding")).isEqualTo("base64");
			assertThat(browser.text("#key-body")).isEqualTo("iVBORw0KGgo=");

			// any key, one that cannot be a path segment too, through the form
			browser.fill("#key-pool", "orders");
			browser.fill("#key-key", "orders/2026/7;v=2%");
			browser.click("#key-search button[type=submit]");
			browser.find("#key-record[data-key='orders/2026/7;v=2%'][data-status=completed]");
			assertThat(browser.text("#key-record")).contains("order-12");

			// what the application stored is shown as text, never run as markup
			String markup = "<img src=x onerror=\"document.body.dataset.pwned='yes'\">";
			long hostile = app.park(markup, markup, "failed", "[\"" + markup.replace("\"", "\\\"") + "\"]", markup);
			browser.open(app.url("/ductor/#/intent/" + hostile));
			browser.find("#intent-page[data-intent-id='" + hostile + "']");
			browser.open(app.url("/ductor/#/intents?status=failed"));
			browser.find("#intents tr[data-intent-id='" + hostile + "']");
			assertThat(browser.text("#intents tr[data-intent-id='" + hostile + "']")).contains(markup);
			assertThat(browser.evaluate("document.querySelectorAll('main img').length")).isEqualTo(0L);
			assertThat(browser.evaluate("document.body.dataset.pwned || 'no'")).isEqualTo("no");
		}
	}

}
