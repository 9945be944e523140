package io.ductor.console;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.security.config.Customizer;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.provisioning.InMemoryUserDetailsManager;
import org.springframework.security.web.SecurityFilterChain;

import io.ductor.test.PostgresExtension;
import io.ductor.test.browser.Browser;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The console behind Spring Security (form login, CSRF protection on): a signed-in user
 * without the operator role reads everything but is refused (403) when deciding or
 * pausing an alarm; a write without the CSRF token is refused; an operator's decision
 * goes through and is stored under the operator's name.
 */
class ConsoleSecurityBrowserTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	static ConsoleApp app;

	@BeforeAll
	static void start() {
		app = ConsoleApp.start(postgres, Secured.class);
	}

	@AfterAll
	static void stop() {
		app.close();
	}

	@Test
	void aDecisionNeedsTheOperatorRoleAndTheCsrfToken() {
		long parked = app.park("receipt.send", "receipt:order-3", "needs_decision", "[{\"order\":\"order-3\"}]", null);
		try (Browser browser = Browser.launch(1280, 800)) {
			signIn(browser, "viewer");
			browser.open(app.url("/ductor/#/intent/" + parked));
			browser.find("#intent-page[data-status=needs_decision]");
			decide(browser, "mark_done", "the viewer tries");
			assertThat(browser.find("#error[data-status='403']").getText()).contains("operator role");
			assertThat(status(parked)).isEqualTo("needs_decision");
			Object bulk = browser.driver()
				.executeAsyncScript("const done = arguments[arguments.length - 1]; const b = document.body.dataset;"
						+ "fetch(b.endpoint, {method: 'POST', headers: {'Content-Type': 'application/json',"
						+ " [b.csrfHeader]: b.csrfToken}, body: JSON.stringify({effect: 'receipt.send',"
						+ " status: 'needs_decision', action: 'cancel', reason: 'the viewer again'})})"
						+ ".then((r) => done(r.status));");
			assertThat(bulk).isEqualTo(403L);
			assertThat(status(parked)).isEqualTo("needs_decision");
		}
		try (Browser browser = Browser.launch(1280, 800)) {
			signIn(browser, "operator");
			browser.open(app.url("/ductor/#/intent/" + parked));
			browser.find("#intent-page[data-status=needs_decision]");
			Object withoutToken = browser.driver()
				.executeAsyncScript("const done = arguments[arguments.length - 1];"
						+ "fetch(document.body.dataset.endpoint + '/" + parked + "', {method: 'POST',"
						+ " headers: {'Content-Type': 'application/json'},"
						+ " body: JSON.stringify({action: 'resolve', resolution: 'mark_done', reason: 'no token'})})"
						+ ".then((r) => done(r.status));");
			assertThat(withoutToken).isEqualTo(403L);
			assertThat(status(parked)).isEqualTo("needs_decision");

			decide(browser, "mark_done", "seen in the relay's log");
			browser.find("#action-done");
		}
		assertThat(app.jdbc
			.sql("SELECT status || ' ' || decided_by || ' ' || decision_reason FROM eec_effect_intent "
					+ "WHERE id = ?")
			.param(parked)
			.query(String.class)
			.single()).isEqualTo("completed operator seen in the relay's log");
	}

	@Test
	void pausingAnAlarmNeedsTheOperatorRoleAndTheCsrfToken() {
		app.jdbc
			.sql("""
					INSERT INTO eec_recurring_alarm (name, effect_name, every_ms, zone, payload, payload_fingerprint, missed,
					                                 grace_ms, declared_in, next_at, created_at, updated_at)
					VALUES ('heartbeat', 'monitor.ping', 60000, 'UTC', '[]', 'f', 'run_once', 60000, 'api',
					        now() + interval '1 hour', now(), now())""")
			.update();
		String row = "#recurring-alarms tr[data-alarm='heartbeat']";
		try (Browser browser = Browser.launch(1280, 800)) {
			signIn(browser, "viewer");
			browser.open(app.url("/ductor/#/alarms"));
			browser.click(row + " button[data-alarm-action=pause]");
			browser.fill("#confirm-reason", "the viewer tries");
			browser.click("#confirm-ok");
			assertThat(browser.find("#error[data-status='403']").getText()).contains("operator role");
			assertThat(paused("heartbeat")).isFalse();
		}
		try (Browser browser = Browser.launch(1280, 800)) {
			signIn(browser, "operator");
			browser.open(app.url("/ductor/#/alarms"));
			browser.find(row);
			Object withoutToken = browser.driver()
				.executeAsyncScript("const done = arguments[arguments.length - 1];"
						+ "fetch(document.body.dataset.endpoint + '/alarms/pause', {method: 'POST',"
						+ " headers: {'Content-Type': 'application/json'},"
						+ " body: JSON.stringify({name: 'heartbeat', reason: 'no token'})})"
						+ ".then((r) => done(r.status));");
			assertThat(withoutToken).isEqualTo(403L);
			assertThat(paused("heartbeat")).isFalse();

			browser.click(row + " button[data-alarm-action=pause]");
			browser.fill("#confirm-reason", "monitoring moves tonight");
			browser.click("#confirm-ok");
			browser.find(row + "[data-paused=true]");
		}
		assertThat(app.jdbc
			.sql("SELECT paused || ' ' || decided_by || ' ' || decision_reason FROM eec_recurring_alarm "
					+ "WHERE name = 'heartbeat'")
			.query(String.class)
			.single()).isEqualTo("true operator monitoring moves tonight");
	}

	private static boolean paused(String alarm) {
		return app.jdbc.sql("SELECT paused FROM eec_recurring_alarm WHERE name = ?")
			.param(alarm)
			.query(Boolean.class)
			.single();
	}

	private static void signIn(Browser browser, String user) {
		browser.open(app.url("/login"));
		browser.fill("#username", user);
		browser.fill("#password", "secret-" + user);
		browser.click("button[type=submit]");
		browser.await(() -> !browser.driver().getCurrentUrl().contains("/login"), "the sign-in of " + user);
	}

	private static void decide(Browser browser, String action, String reason) {
		browser.click("button[data-action=" + action + "]");
		browser.fill("#confirm-reason", reason);
		browser.click("#confirm-ok");
	}

	private static String status(long id) {
		return app.jdbc.sql("SELECT status FROM eec_effect_intent WHERE id = ?").param(id).query(String.class).single();
	}

	/** Form login for everything, CSRF protection as Spring Security sets it up. */
	@SpringBootConfiguration
	@EnableAutoConfiguration
	static class Secured {

		@Bean
		SecurityFilterChain security(HttpSecurity http) throws Exception {
			return http.authorizeHttpRequests((requests) -> requests.anyRequest().authenticated())
				.formLogin(Customizer.withDefaults())
				.build();
		}

		@Bean
		InMemoryUserDetailsManager users() {
			return new InMemoryUserDetailsManager(
					User.withUsername("viewer").password("{noop}secret-viewer").roles("VIEWER").build(),
					User.withUsername("operator").password("{noop}secret-operator").roles("DUCTOR_OPERATOR").build());
		}

	}

}
