package io.ductor.console;

import java.time.Duration;
import java.util.Map;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import io.ductor.effect.AlarmSchedule;
import io.ductor.effect.DurableEffect;
import io.ductor.effect.EffectOutbox;
import io.ductor.effect.EffectRequest;
import io.ductor.effect.RecurringAlarms;
import io.ductor.test.PostgresExtension;
import io.ductor.test.browser.Browser;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The console's views of alarms, concurrency slots, reconcile rounds and compensation
 * chains in headless Chromium, on an application with a recurring alarm in its
 * properties, one declared from code, named alarms and a limited effect: an operator
 * pauses and resumes an alarm with a reason, and the database keeps both decisions.
 */
class ConsoleAlarmsBrowserTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	static ConsoleApp app;

	static EffectOutbox outbox;

	static RecurringAlarms alarms;

	static TransactionTemplate transactions;

	@BeforeAll
	static void start() {
		app = ConsoleApp.start(postgres, Shop.class, ConsoleApp.WITHOUT_SECURITY,
				"ductor.effects.alarm-scheduler.enabled=false",
				"ductor.effects.alarms.nightly-settlement.cron=0 0 2 * * *",
				"ductor.effects.alarms.nightly-settlement.zone=Europe/Berlin",
				"ductor.effects.alarms.nightly-settlement.effect=settlement.run");
		outbox = app.context.getBean(EffectOutbox.class);
		alarms = app.context.getBean(RecurringAlarms.class);
		transactions = new TransactionTemplate(app.context.getBean(PlatformTransactionManager.class));
	}

	@AfterAll
	static void stop() {
		app.close();
	}

	@Test
	void anOperatorSeesAlarmsWithTheirOccurrencesAndPausesAndResumesOneWithAReason() {
		transactions.executeWithoutResult((status) -> alarms.scheduleRecurring("report:acme",
				AlarmSchedule.every(Duration.ofHours(1)), EffectRequest.of("report.send", "acme")));
		long ran = app.jdbc.sql("""
				INSERT INTO eec_effect_intent (effect_name, idempotency_key, payload, payload_fingerprint, status,
				                               attempts, finished_at)
				VALUES ('report.send', 'alarm:report:acme@2026-03-01T10:00:00Z', '["acme"]', 'f', 'completed', 1, now())
				RETURNING id""").query(Long.class).single();
		app.jdbc
			.sql("UPDATE eec_recurring_alarm SET last_key = 'alarm:report:acme@2026-03-01T10:00:00Z', "
					+ "last_occurrence_at = '2026-03-01T10:00:00Z' WHERE name = 'report:acme'")
			.update();
		String first = remind("reminder:order-1");
		app.jdbc.sql("UPDATE eec_effect_intent SET status = 'completed', finished_at = now() WHERE idempotency_key = ?")
			.param(first)
			.update();
		String next = remind("reminder:order-1");
		remind("reminder:order-2");
		transactions.executeWithoutResult((status) -> outbox.cancelAlarm("reminder:order-2"));
		long pending = app.jdbc.sql("SELECT id FROM eec_effect_intent WHERE idempotency_key = ?")
			.param(next)
			.query(Long.class)
			.single();

		try (Browser browser = Browser.launch(1280, 800)) {
			browser.open(app.url("/ductor/#/alarms"));
			String nightly = "#recurring-alarms tr[data-alarm='nightly-settlement']";
			browser.find(nightly + "[data-paused=false]");
			assertThat(browser.text(nightly)).contains("0 0 2 * * *")
				.contains("Europe/Berlin")
				.contains("settlement.run");
			assertThat(browser.text(nightly + " [data-field=next]")).isNotEmpty();
			String acme = "#recurring-alarms tr[data-alarm='report:acme']";
			assertThat(browser.text(acme)).contains("every 1 h");
			assertThat(browser.text(acme + " [data-field=last]")).contains(String.valueOf(ran)).contains("completed");
			String reminder = "#one-shot-alarms tr[data-one-shot='reminder:order-1']";
			assertThat(browser.text(reminder + " [data-field=next]")).contains(String.valueOf(pending)).contains("due");
			assertThat(browser.text(reminder + " [data-field=last]")).contains("completed");
			assertThat(browser.text("#one-shot-alarms tr[data-one-shot='reminder:order-2'] [data-field=last]"))
				.contains("cancelled");
			assertThat(browser.text("#one-shot-alarms tr[data-one-shot='reminder:order-2'] [data-field=next]"))
				.isEqualTo("–");

			browser.click(nightly + " button[data-alarm-action=pause]");
			browser.fill("#confirm-reason", "bank holiday, ticket OPS-7");
			browser.click("#confirm-ok");
			browser.find("#action-done");
			browser.find(nightly + "[data-paused=true]");
			assertThat(browser.text(nightly + " [data-field=next]")).isEqualTo("paused");
			assertThat(browser.text(nightly + " [data-field=decision]")).contains("anonymous")
				.contains("bank holiday, ticket OPS-7");
			assertThat(alarm("nightly-settlement")).containsEntry("paused", true)
				.containsEntry("decision_reason", "bank holiday, ticket OPS-7")
				.containsEntry("decided_by", "anonymous");
			browser.screenshot(ConsoleApp.screenshot("console-alarms.png"));

			browser.click(nightly + " button[data-alarm-action=resume]");
			browser.fill("#confirm-reason", "back after the holiday");
			browser.click("#confirm-ok");
			browser.find(nightly + "[data-paused=false]");
			assertThat(alarm("nightly-settlement")).containsEntry("paused", false)
				.containsEntry("decision_reason", "back after the holiday")
				.containsEntry("future", true);

			// only the names that start with what the operator typed
			browser.fill("#alarm-prefix", "reminder:");
			browser.click("#alarm-search button[type=submit]");
			browser.find("#recurring-none");
			assertThat(browser.evaluate("document.querySelectorAll('#one-shot-alarms tr[data-one-shot]').length"))
				.isEqualTo(2L);
		}
	}

	@Test
	void theSlotsReconcileRoundsAndCompensationChainShowWhatTheDatabaseHolds() {
		long holder = app.jdbc.sql("""
				INSERT INTO eec_effect_intent (effect_name, idempotency_key, payload, payload_fingerprint, status,
				                               attempts, lease_owner, lease_expires_at, attempt_started_at)
				VALUES ('legacy.submit', 'submit:order-4', '["order-4"]', 'f', 'in_flight', 1, 'instance-a',
				        now() + interval '1 minute', now() - interval '3 seconds')
				RETURNING id""").query(Long.class).single();
		app.jdbc
			.sql("""
					INSERT INTO eec_effect_slot (effect_name, slot, intent_id, attempt, updated_at)
					VALUES ('legacy.submit', 2, ?, 1, now())
					ON CONFLICT (effect_name, slot) DO UPDATE SET intent_id = excluded.intent_id, attempt = excluded.attempt""")
			.param(holder)
			.update();
		long reconciling = app.park("receipt.send", "receipt:order-5", "reconciling", "[{\"order\":\"order-5\"}]",
				null);
		app.jdbc
			.sql("UPDATE eec_effect_intent SET reconcile_rounds = 2, reconcile_outcome = 'UNKNOWN', "
					+ "next_attempt_at = now() + interval '30 seconds' WHERE id = ?")
			.param(reconciling)
			.update();
		app.jdbc
			.sql("INSERT INTO eec_run (id, type, status, state, compensation) "
					+ "VALUES ('trip-9', 'trip', 'failed', '{}', 'compensating')")
			.update();
		app.jdbc
			.sql("""
					INSERT INTO eec_run_compensation (run_id, original_key, seq, effect_name, payload)
					VALUES ('trip-9', 'hotel:trip-9', 1, 'hotel.cancel', '[]'), ('trip-9', 'flight:trip-9', 2, 'flight.cancel', '[]')""")
			.update();
		long hotel = app.park("hotel.book", "hotel:trip-9", "completed", "[]", "trip-9");
		long flight = app.park("flight.book", "flight:trip-9", "completed", "[]", "trip-9");
		app.jdbc.sql("""
				INSERT INTO eec_effect_intent (effect_name, idempotency_key, payload, payload_fingerprint, status,
				                               run_id, compensation_of)
				VALUES ('flight.cancel', 'compensate:flight:trip-9', '[]', 'f', 'completed', 'trip-9', ?),
				       ('hotel.cancel', 'compensate:hotel:trip-9', '[]', 'f', 'needs_decision', 'trip-9', ?)""")
			.params(flight, hotel)
			.update();

		try (Browser browser = Browser.launch(1280, 800)) {
			browser.open(app.url("/ductor/#/slots"));
			String legacy = ".slot-effect[data-effect=\"legacy.submit\"]";
			browser.find(legacy + "[data-in-use='1'][data-limit='2']");
			assertThat(browser.text(legacy + " [data-field=use]")).isEqualTo("1 of 2 slots in use");
			assertThat(browser.text(legacy + " tr[data-slot='2']")).contains(String.valueOf(holder))
				.contains("submit:order-4")
				.contains("instance-a");
			assertThat(browser.evaluate("document.querySelectorAll('" + legacy + " .slot.held').length")).isEqualTo(1L);
			browser.screenshot(ConsoleApp.screenshot("console-slots.png"));

			browser.open(app.url("/ductor/#/intents?status=reconciling"));
			assertThat(browser.text("#intents tr[data-intent-id='" + reconciling + "'] [data-reconcile]"))
				.contains("2 rounds, UNKNOWN");
			browser.click("#intents tr[data-intent-id='" + reconciling + "'] a");
			browser.find("#intent-page[data-intent-id='" + reconciling + "']");
			assertThat(browser.text("[data-field=reconcile]"))
				.startsWith("2 rounds, last outcome UNKNOWN, next round ");

			browser.open(app.url("/ductor/#/run/trip-9"));
			browser.find("#compensation-state[data-state=compensating]");
			assertThat(browser.text("#run-page"))
				.contains("2 compensations, latest tick first: undoing: 1 of 2 finished");
			assertThat(browser.evaluate("[...document.querySelectorAll('#compensations tr[data-original-key]')]"
					+ ".map((r) => r.dataset.originalKey + ' ' + r.dataset.compensation).join(', ')"))
				.isEqualTo("flight:trip-9 completed, hotel:trip-9 needs_decision");
			assertThat(browser.text("#compensations tr[data-original-key='hotel:trip-9']"))
				.contains(String.valueOf(hotel))
				.contains("hotel.cancel")
				.contains("needs_decision");
			browser.evaluate("document.getElementById('compensations').scrollIntoView()");
			browser.screenshot(ConsoleApp.screenshot("console-compensation.png"));
		}
	}

	static String remind(String alarm) {
		return transactions.execute(
				(status) -> outbox.scheduleAlarm(alarm, Duration.ofHours(1), EffectRequest.of("reminder.send", alarm)));
	}

	static Map<String, Object> alarm(String name) {
		return app.jdbc.sql("""
				SELECT paused, decision_reason, decided_by, next_at > now() AS future
				FROM eec_recurring_alarm WHERE name = ?""").param(name).query().singleRow();
	}

	/**
	 * A shop with a nightly settlement, reports, reminders and a limited legacy system.
	 */
	@SpringBootConfiguration
	@EnableAutoConfiguration
	static class Shop {

		@Bean
		Effects effects() {
			return new Effects();
		}

	}

	static class Effects {

		@DurableEffect(name = "settlement.run")
		public void settle() {
		}

		@DurableEffect(name = "report.send")
		public void report(String tenant) {
		}

		@DurableEffect(name = "reminder.send")
		public void remind(String what) {
		}

		@DurableEffect(name = "legacy.submit", maxConcurrency = 2)
		public void submit(String order) {
		}

	}

}
