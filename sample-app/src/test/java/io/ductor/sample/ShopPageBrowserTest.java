package io.ductor.sample;

import java.nio.file.Path;
import java.time.Duration;
import java.util.function.Supplier;

import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.Test;

import io.ductor.sample.fault.Fault;
import io.ductor.sample.mail.MailServer;
import io.ductor.test.browser.Browser;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The page at {@code /} in a real headless Chromium: place an order with a chosen key,
 * replay the request, and resolve the receipt that waits for a decision through the
 * page's link to the operator console, each click checked in the database.
 */
class ShopPageBrowserTest extends ShopTestSupport {

	private static final Duration PATIENCE = Duration.ofSeconds(30);

	@Test
	void pagePlacesAnOrderWithAChosenKeyReplaysItAndResolvesAnUndecidedReceipt() throws Exception {
		bean(MailServer.class).faults().inject(Fault.AFTER_APPLY_LOG_DOWN);
		try (Browser browser = Browser.launch(1280, 900)) {
			browser.open("http://localhost:" + port() + "/");
			assertThat(browser.evaluate("document.title")).isEqualTo("Ductor sample shop");

			browser.fill("#customer", "heidi");
			browser.fill("#sku", "book-2");
			browser.fill("#quantity", "3");
			browser.fill("#key", "browser-order-1");
			browser.click("#place");
			awaitValue(browser, () -> browser.evaluate("document.querySelector('#last-response').dataset.status"),
					"201");
			String orderId = (String) browser.evaluate("document.querySelector('#last-response').dataset.lastOrderId");
			assertThat(jdbc().sql("SELECT id FROM sample_order WHERE idempotency_key = 'browser-order-1'")
				.query(String.class)
				.single()).isEqualTo(orderId);

			String order = ".order[data-order-id='" + orderId + "']";
			String receipt = order + " tr[data-effect-name='receipt.send']";
			awaitValue(browser, () -> browser.evaluate("document.querySelector(\"" + order + "\")?.dataset.status"),
					"completed");
			awaitValue(browser,
					() -> browser.evaluate("document.querySelector(\"" + receipt + "\")?.dataset.effectStatus"),
					"needs_decision");

			browser.click("#replay");
			awaitValue(browser, () -> browser.evaluate("document.querySelector('#last-response').dataset.replayed"),
					"true");
			assertThat(browser.evaluate("document.querySelector('#last-response').dataset.lastOrderId"))
				.isEqualTo(orderId);
			assertThat(jdbc().sql("SELECT count(*) FROM sample_order").query(Long.class).single()).isOne();
			browser.screenshot(Path.of("target", "screenshots", "shop-page.png"));

			// the shop links an undecided effect to the operator console, where it is
			// decided with a reason
			browser.click(receipt + " a[data-console-link]");
			browser.find("#intent-page[data-status=needs_decision]");
			browser.click("button[data-action=mark_done]");
			browser.fill("#confirm-reason", "the receipt is in the mail server's sent log");
			browser.click("#confirm-ok");
			browser.find("#action-done");
			await().atMost(PATIENCE)
				.until(() -> "completed"
					.equals(jdbc().sql("SELECT status FROM eec_effect_intent WHERE idempotency_key = ?")
						.param("receipt:" + orderId)
						.query(String.class)
						.single()));
			browser.open("http://localhost:" + port() + "/");
			awaitValue(browser,
					() -> browser.evaluate("document.querySelector(\"" + receipt + "\")?.dataset.effectStatus"),
					"completed");
			assertThat(jdbc().sql("SELECT count(*) FROM sample_receipt WHERE order_id = ?")
				.param(orderId)
				.query(Long.class)
				.single()).isOne();
			assertThat(jdbc().sql("SELECT count(*) FROM sample_payment WHERE order_id = ?")
				.param(orderId)
				.query(Long.class)
				.single()).isOne();
		}
	}

	private static void awaitValue(Browser browser, Supplier<Object> value, String expected) throws Exception {
		try {
			await().atMost(PATIENCE).pollInterval(Duration.ofMillis(200)).until(() -> expected.equals(value.get()));
		}
		catch (ConditionTimeoutException ex) {
			browser.screenshot(Path.of("target", "screenshots", "shop-page-failure.png"));
			throw new AssertionError("Expected '" + expected + "' but the page shows '" + value.get()
					+ "'; last response: " + browser.evaluate("document.querySelector('#last-response').textContent")
					+ " (screenshot in target/screenshots/shop-page-failure.png)", ex);
		}
	}

}
