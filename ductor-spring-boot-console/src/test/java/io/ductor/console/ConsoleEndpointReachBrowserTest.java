package io.ductor.console;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import io.ductor.test.PostgresExtension;
import io.ductor.test.browser.Browser;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The console in headless Chromium when it cannot fully reach the {@code ductor}
 * endpoint: instead of a bare "404 Not Found", the page names the property to set, as the
 * start-up warning does.
 */
@ExtendWith(OutputCaptureExtension.class)
class ConsoleEndpointReachBrowserTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	@Test
	void anEndpointNotExposedOverHttpIsNamedOnThePageAndInTheLog(CapturedOutput output) {
		try (ConsoleApp app = ConsoleApp.start(postgres, ConsoleApp.Open.class, ConsoleApp.WITHOUT_SECURITY,
				"management.endpoints.web.exposure.include=health,info")) {
			assertThat(output).contains("WARN")
				.contains("Ductor's operator console (ductor.console.enabled=true, at /ductor) shows nothing: the "
						+ "ductor actuator endpoint is not exposed over HTTP; add ductor to "
						+ "management.endpoints.web.exposure.include "
						+ "(management.endpoints.web.exposure.include=health,info,ductor).");
			try (Browser browser = Browser.launch(1280, 800)) {
				browser.open(app.url("/ductor"));
				String problem = browser.text("#endpoint-problem");
				assertThat(problem).contains("The console cannot reach the ductor endpoint")
					.contains("management.endpoints.web.exposure.include=health,info,ductor")
					.doesNotContain("404");
				// the properties stand out as code
				assertThat(browser.evaluate("[...document.querySelectorAll('#endpoint-problem code')]"
						+ ".map((c) => c.textContent).join(' | ')"))
					.isEqualTo("ductor.console.enabled=true | management.endpoints.web.exposure.include | "
							+ "management.endpoints.web.exposure.include=health,info,ductor");
				browser.click("nav a[data-page=alarms]");
				browser.await(() -> "alarms".equals(browser.evaluate("document.querySelector('main').dataset.page")),
						"the alarms page");
				assertThat(browser.text("#endpoint-problem")).contains("management.endpoints.web.exposure.include");
				browser.screenshot(ConsoleApp.screenshot("console-endpoint-missing.png"));
			}
		}
	}

	@Test
	void anEndpointOnAnotherPortIsANoticeAndItsMissingAnswerNamesTheExposure() {
		try (ConsoleApp app = ConsoleApp.start(postgres, ConsoleApp.Open.class, ConsoleApp.WITHOUT_SECURITY,
				"management.server.port=0")) {
			try (Browser browser = Browser.launch(1280, 800)) {
				browser.open(app.url("/ductor"));
				assertThat(browser.text("#endpoint-notice")).contains("management.server.port=0");
				// the page asked its own port, where nothing answers
				assertThat(browser.text("#endpoint-problem")).contains("answered 404")
					.contains("management.endpoints.web.exposure.include");
			}
		}
	}

	@Test
	void aReadOnlyEndpointShowsEverythingWithANoticeAndRefusesDecisions() {
		try (ConsoleApp app = ConsoleApp.start(postgres, ConsoleApp.Open.class, ConsoleApp.WITHOUT_SECURITY,
				"management.endpoint.ductor.access=read-only")) {
			long parked = app.park("receipt.send", "receipt:read-only", "needs_decision", "[]", null);
			try (Browser browser = Browser.launch(1280, 800)) {
				browser.open(app.url("/ductor"));
				browser.find("#overview");
				assertThat(browser.text("#endpoint-notice")).contains("management.endpoint.ductor.access=unrestricted");
				browser.open(app.url("/ductor/#/intent/" + parked));
				browser.find("#intent-page[data-status=needs_decision]");
				browser.click("button[data-action=mark_done]");
				browser.fill("#confirm-reason", "tried on a read-only endpoint");
				browser.click("#confirm-ok");
				browser.find("#error");
			}
			assertThat(app.jdbc.sql("SELECT status FROM eec_effect_intent WHERE id = ?")
				.param(parked)
				.query(String.class)
				.single()).isEqualTo("needs_decision");
		}
	}

}
