package io.ductor.console;

import java.util.List;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.ductor.test.PostgresExtension;
import io.ductor.test.browser.Browser;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The intents list over 100,000 intents in a real headless Chromium: filtered by status
 * and effect through the form, and paged by id (keyset), each page the next ids the
 * database holds.
 */
class ConsolePagingBrowserTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	static ConsoleApp app;

	@BeforeAll
	static void start() {
		app = ConsoleApp.start(postgres, ConsoleApp.Open.class, ConsoleApp.WITHOUT_SECURITY);
		// 100,000 intents of four effects: every 10th failed, every 25th waiting for a
		// decision
		app.jdbc.sql("""
				INSERT INTO eec_effect_intent (effect_name, idempotency_key, payload, payload_fingerprint, status,
				                               attempts, max_attempts, last_error, created_at, finished_at)
				SELECT (ARRAY['mail.send', 'stock.reserve', 'payment.charge', 'receipt.send'])[1 + n % 4], 'bulk-' || n,
				       jsonb_build_array(jsonb_build_object('n', n)), 'f',
				       CASE WHEN n % 10 = 0 THEN 'failed' WHEN n % 25 = 1 THEN 'needs_decision' ELSE 'completed' END,
				       1, 1, CASE WHEN n % 10 = 0 THEN 'connection refused' END,
				       now() - (100000 - n) * interval '1 second',
				       CASE WHEN n % 10 = 0 OR n % 25 <> 1 THEN now() END
				FROM generate_series(1, 100000) AS n""").update();
		app.jdbc.sql("ANALYZE eec_effect_intent").update();
	}

	@AfterAll
	static void stop() {
		app.close();
	}

	@Test
	void filteringAHundredThousandIntentsByStatusAndEffectPagesThroughThemByIdInOrder() {
		List<Long> expected = app.jdbc
			.sql("SELECT id FROM eec_effect_intent WHERE status = 'failed' AND effect_name = 'payment.charge' "
					+ "ORDER BY id LIMIT 150")
			.query(Long.class)
			.list();
		assertThat(expected).hasSize(150);
		try (Browser browser = Browser.launch(1280, 800)) {
			browser.open(app.url("/ductor/#/intents"));
			browser.find("#filters");
			browser.driver()
				.findElement(org.openqa.selenium.By.cssSelector("#filter-status option[value=failed]"))
				.click();
			browser.fill("#filter-effect", "payment.charge");
			browser.click("#filter-apply");
			browser.find("#pager[data-page='1'][data-rows='50'][data-status=failed][data-effect='payment.charge']");
			assertThat(shownIds(browser)).containsExactlyElementsOf(expected.subList(0, 50));
			assertThat(browser.evaluate("[...document.querySelectorAll('#intents tr[data-status]')]"
					+ ".every((r) => r.dataset.status === 'failed')"))
				.isEqualTo(true);
			browser.screenshot(ConsoleApp.screenshot("console-intents.png"));

			browser.click("#page-next");
			browser.find("#pager[data-page='2']");
			assertThat(shownIds(browser)).containsExactlyElementsOf(expected.subList(50, 100));
			browser.click("#page-next");
			browser.find("#pager[data-page='3']");
			assertThat(shownIds(browser)).containsExactlyElementsOf(expected.subList(100, 150));
			assertThat(browser.driver().getCurrentUrl()).contains("afterId=" + expected.get(99))
				.doesNotContain("offset");

			browser.click("#page-first");
			browser.find("#pager[data-page='1']");
			assertThat(shownIds(browser)).containsExactlyElementsOf(expected.subList(0, 50));
		}
	}

	@SuppressWarnings("unchecked")
	private static List<Long> shownIds(Browser browser) {
		return ((List<Object>) browser
			.evaluate("[...document.querySelectorAll('#intents tr[data-intent-id]')].map((r) => +r.dataset.intentId)"))
			.stream()
			.map((id) -> ((Number) id).longValue())
			.toList();
	}

}
