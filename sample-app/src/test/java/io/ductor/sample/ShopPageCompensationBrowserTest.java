package io.ductor.sample;

import java.nio.file.Path;
import java.time.Duration;
import java.util.function.Supplier;

import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.Test;

import io.ductor.test.browser.Browser;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The page at {@code /} in a real headless Chromium: an order whose shelf is empty at
 * shipping (the warehouse fault button) shows its run failed, then compensated, with the
 * refund and the release among its effects.
 */
class ShopPageCompensationBrowserTest extends ShopTestSupport {

	private static final Duration PATIENCE = Duration.ofSeconds(30);

	@Test
	void pageShowsAnOrderThatFailedAtShippingBeingRefundedAndReleased() throws Exception {
		try (Browser browser = Browser.launch(1280, 900)) {
			browser.open("http://localhost:" + port() + "/");
			browser.click("button[data-fault-target='warehouse']");
			awaitValue(browser, () -> browser.evaluate("document.querySelector('#fault-status').textContent"),
					"queued: gateway 0, mailer 0, warehouse 1");
			browser.fill("#customer", "ivan");
			browser.fill("#sku", "mug-1");
			browser.fill("#quantity", "2");
			browser.fill("#key", "browser-shipping-1");
			browser.click("#place");
			awaitValue(browser, () -> browser.evaluate("document.querySelector('#last-response').dataset.status"),
					"201");
			String orderId = (String) browser.evaluate("document.querySelector('#last-response').dataset.lastOrderId");

			String order = ".order[data-order-id='" + orderId + "']";
			awaitValue(browser, () -> browser.evaluate("document.querySelector(\"" + order + "\")?.dataset.status"),
					"failed");
			awaitValue(browser,
					() -> browser.evaluate("document.querySelector(\"" + order + "\")?.dataset.compensation"),
					"compensated");
			for (String effect : new String[] { "payment.refund", "stock.release" }) {
				awaitValue(browser, () -> browser.evaluate("document.querySelector(\"" + order
						+ " tr[data-effect-name='" + effect + "']\")?.dataset.effectStatus"), "completed");
			}
			assertThat(browser.evaluate("document.querySelector(\"" + order + " [data-refunded]\").textContent"))
				.isEqualTo("EUR 24.00");
			assertThat(browser.evaluate("document.querySelector(\"" + order + " [data-released]\").textContent"))
				.isEqualTo("2");
			browser.screenshot(Path.of("target", "screenshots", "shop-page-compensated.png"));
			assertThat(jdbc().sql("SELECT count(*) FROM sample_refund WHERE order_id = ?")
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
			browser.screenshot(Path.of("target", "screenshots", "shop-page-compensation-failure.png"));
			throw new AssertionError("Expected '" + expected + "' but the page shows '" + value.get() + "'", ex);
		}
	}

}
