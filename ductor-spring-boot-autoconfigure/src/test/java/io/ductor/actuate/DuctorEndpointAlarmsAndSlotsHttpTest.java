package io.ductor.actuate;

import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.List;
import java.util.Map;

import javax.sql.DataSource;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;
import tools.jackson.core.type.TypeReference;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import io.ductor.effect.AlarmSchedule;
import io.ductor.effect.DurableEffect;
import io.ductor.effect.EffectOutbox;
import io.ductor.effect.RecurringAlarms;
import io.ductor.effect.EffectRequest;
import io.ductor.test.PostgresExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the console reads of alarms and concurrency slots, and its pause and resume of a
 * recurring alarm, through the {@code ductor} endpoint over real HTTP, judged on the
 * rows.
 */
@ExtendWith(OutputCaptureExtension.class)
class DuctorEndpointAlarmsAndSlotsHttpTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	static ConfigurableApplicationContext app;

	static HttpClient http;

	static String base;

	static JdbcClient jdbc;

	static EffectOutbox outbox;

	static RecurringAlarms alarms;

	static TransactionTemplate transactions;

	static final JsonMapper json = JsonMapper.builder().build();

	@BeforeAll
	static void start() {
		app = new SpringApplicationBuilder(AlarmsApplication.class).properties(postgres.springProperties())
			.properties("server.port=0", "management.endpoints.web.exposure.include=ductor",
					"ductor.effects.drainer.enabled=false", "ductor.effects.reconciler.enabled=false",
					"ductor.effects.alarm-scheduler.enabled=false", "ductor.retention.enabled=false",
					"ductor.idempotency.sweeper.enabled=false", "ductor.effects.alarms.nightly.cron=0 0 2 * * *",
					"ductor.effects.alarms.nightly.zone=Europe/Berlin",
					"ductor.effects.alarms.nightly.effect=report.send", "ductor.effects.alarms.nightly.arguments=EUR")
			.run();
		base = "http://localhost:" + app.getEnvironment().getProperty("local.server.port") + "/actuator/ductor";
		http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
		jdbc = JdbcClient.create(app.getBean(DataSource.class));
		outbox = app.getBean(EffectOutbox.class);
		alarms = app.getBean(RecurringAlarms.class);
		transactions = new TransactionTemplate(app.getBean(PlatformTransactionManager.class));
	}

	@AfterAll
	static void stop() {
		app.close();
	}

	@AfterEach
	void forgetIntents() {
		jdbc.sql("DELETE FROM eec_effect_intent").update();
		jdbc.sql("DELETE FROM eec_recurring_alarm WHERE declared_in = 'api'").update();
		jdbc.sql("UPDATE eec_recurring_alarm SET paused = false, decision_reason = NULL, decided_by = NULL, "
				+ "decided_at = NULL")
			.update();
	}

	@Test
	void recurringAlarmsArePagedByNameWithTheirNextAndLastOccurrenceAndItsIntent() throws Exception {
		for (String name : List.of("report:acme", "report:globex", "report:initech", "heartbeat")) {
			transactions.executeWithoutResult((status) -> alarms.scheduleRecurring(name,
					AlarmSchedule.every(Duration.ofHours(1)), EffectRequest.of("report.send", name)));
		}
		// the last occurrence of report:globex ran and completed; report:initech's was
		// purged
		long ran = jdbc.sql("""
				INSERT INTO eec_effect_intent (effect_name, idempotency_key, payload, payload_fingerprint, status,
				                               finished_at)
				VALUES ('report.send', 'alarm:report:globex@2026-03-01T10:00:00Z', '["report:globex"]', 'f',
				        'completed', now()) RETURNING id""").query(Long.class).single();
		jdbc.sql("UPDATE eec_recurring_alarm SET last_key = 'alarm:report:' || split_part(name, ':', 2) "
				+ "|| '@2026-03-01T10:00:00Z', last_occurrence_at = '2026-03-01T10:00:00Z' "
				+ "WHERE name IN ('report:globex', 'report:initech')")
			.update();

		List<Map<String, Object>> first = list(get("/alarms/recurring?prefix=report:&limit=2"));
		assertThat(first).extracting((alarm) -> alarm.get("name")).containsExactly("report:acme", "report:globex");
		assertThat(first.get(0)).containsEntry("every", "PT1H")
			.containsEntry("paused", false)
			.containsEntry("lastOutcome", null);
		assertThat(first.get(0).get("nextAt")).isNotNull();
		assertThat(first.get(1)).containsEntry("lastOutcome", "completed")
			.containsEntry("lastIntentId", (int) ran)
			.containsEntry("lastKey", "alarm:report:globex@2026-03-01T10:00:00Z");
		List<Map<String, Object>> second = list(get("/alarms/recurring?prefix=report:&limit=2&after=report:globex"));
		assertThat(second).extracting((alarm) -> alarm.get("name")).containsExactly("report:initech");
		assertThat(second.get(0)).containsEntry("lastOutcome", "purged").containsEntry("lastIntentId", null);
		List<Map<String, Object>> all = list(get("/alarms/recurring"));
		assertThat(all).extracting((alarm) -> alarm.get("name"))
			.containsExactly("heartbeat", "nightly", "report:acme", "report:globex", "report:initech");
		assertThat(all.get(1)).containsEntry("cron", "0 0 2 * * *")
			.containsEntry("zone", "Europe/Berlin")
			.containsEntry("declaredIn", "properties");
		assertThat(get("/alarms/weekly").statusCode()).isEqualTo(400);
	}

	@Test
	void anOperatorPausesAndResumesARecurringAlarmWithAReasonStoredAndLogged(CapturedOutput output) throws Exception {
		HttpResponse<String> paused = post("/alarms/pause",
				"{\"name\": \"nightly\", \"reason\": \"bank holiday, ticket OPS-7\"}");
		assertThat(paused.statusCode()).isEqualTo(200);
		assertThat(map(paused)).containsEntry("paused", true)
			.containsEntry("decisionReason", "bank holiday, ticket OPS-7")
			.containsEntry("decidedBy", "anonymous");
		assertThat(alarmRow("nightly")).containsEntry("paused", true)
			.containsEntry("decision_reason", "bank holiday, ticket OPS-7")
			.containsEntry("decided_by", "anonymous")
			.containsEntry("stamped", true);
		assertThat(output.getAll()).contains("ductor endpoint: pause on recurring alarm 'nightly': running, next at")
			.contains("-> paused by anonymous, reason: bank holiday, ticket OPS-7");

		// resumed a week later: its next occurrence is the first after now, not one of
		// the pause
		jdbc.sql("UPDATE eec_recurring_alarm SET next_at = now() - interval '7 days' WHERE name = 'nightly'").update();
		HttpResponse<String> resumed = post("/alarms/resume", "{\"name\": \"nightly\", \"reason\": \"back to work\"}");
		assertThat(resumed.statusCode()).isEqualTo(200);
		assertThat(alarmRow("nightly")).containsEntry("paused", false)
			.containsEntry("decision_reason", "back to work")
			.containsEntry("future", true);
	}

	@Test
	void aPauseOfNoAlarmOrWithABadActionOrReasonChangesNothing() throws Exception {
		assertThat(post("/alarms/pause", "{\"name\": \"no-such-alarm\", \"reason\": \"x\"}").statusCode())
			.isEqualTo(404);
		assertThat(post("/alarms/stop", "{\"name\": \"nightly\", \"reason\": \"x\"}").statusCode()).isEqualTo(400);
		HttpResponse<String> forged = post("/alarms/pause",
				"{\"name\": \"nightly\", \"reason\": \"ok\\nINFO forged audit line\"}");
		assertThat(forged.statusCode()).isEqualTo(400);
		assertThat(forged.body()).contains("reason must be one line of text");
		assertThat(post("/intents/pause", "{\"name\": \"nightly\", \"reason\": \"x\"}").statusCode()).isEqualTo(400);
		assertThat(alarmRow("nightly")).containsEntry("paused", false).containsEntry("decision_reason", null);
	}

	@Test
	void oneShotAlarmsArePagedByNameWithTheirPendingAndNewestOtherOccurrence() throws Exception {
		// reminder:order-1 ran once and was rescheduled; reminder:order-2 was cancelled;
		// reminder:order-3 waits for its first; followup:order-1 failed
		String first = schedule("reminder:order-1");
		jdbc.sql("UPDATE eec_effect_intent SET status = 'completed', finished_at = now() WHERE idempotency_key = ?")
			.param(first)
			.update();
		String next = schedule("reminder:order-1");
		schedule("reminder:order-2");
		transactions.executeWithoutResult((status) -> outbox.cancelAlarm("reminder:order-2"));
		String third = schedule("reminder:order-3");
		String followup = schedule("followup:order-1");
		jdbc.sql("UPDATE eec_effect_intent SET status = 'failed', last_error = 'mailbox full' "
				+ "WHERE idempotency_key = ?")
			.param(followup)
			.update();

		List<Map<String, Object>> page = list(get("/alarms/one-shot?prefix=reminder:&limit=2"));
		assertThat(page).extracting((alarm) -> alarm.get("name"))
			.containsExactly("reminder:order-1", "reminder:order-2");
		assertThat(page.get(0)).containsEntry("effect", "report.send")
			.containsEntry("nextKey", next)
			.containsEntry("lastKey", first)
			.containsEntry("lastStatus", "completed");
		assertThat(page.get(1)).containsEntry("nextKey", null).containsEntry("lastStatus", "cancelled");
		List<Map<String, Object>> rest = list(get("/alarms/one-shot?prefix=reminder:&limit=2&after=reminder:order-2"));
		assertThat(rest).extracting((alarm) -> alarm.get("name")).containsExactly("reminder:order-3");
		assertThat(rest.get(0)).containsEntry("nextKey", third).containsEntry("lastKey", null);
		assertThat(rest.get(0).get("nextAt")).isNotNull();
		List<Map<String, Object>> all = list(get("/alarms/one-shot"));
		assertThat(all).extracting((alarm) -> alarm.get("name"))
			.containsExactly("followup:order-1", "reminder:order-1", "reminder:order-2", "reminder:order-3");
		assertThat(all.get(0)).containsEntry("lastStatus", "failed").containsEntry("lastError", "mailbox full");
		assertThat(list(get("/alarms/one-shot?prefix=" + URLEncoder.encode("nothing:", StandardCharsets.UTF_8))))
			.isEmpty();
	}

	@Test
	void theSlotsOfALimitedEffectNameTheAttemptsHoldingThemUnderALiveLease() throws Exception {
		long holding = inFlight("legacy-1", "now() + interval '1 minute'");
		long expired = inFlight("legacy-2", "now() - interval '1 second'");
		long moved = inFlight("legacy-3", "now() + interval '1 minute'");
		jdbc.sql(
				"""
						INSERT INTO eec_effect_slot (effect_name, slot, intent_id, attempt, updated_at)
						VALUES ('legacy.submit', 1, ?, 1, now()), ('legacy.submit', 2, ?, 1, now()),
						       ('legacy.submit', 3, ?, 0, now())
						ON CONFLICT (effect_name, slot) DO UPDATE SET intent_id = excluded.intent_id, attempt = excluded.attempt""")
			.params(holding, expired, moved)
			.update();

		List<Map<String, Object>> slots = list(get("/slots"));
		assertThat(slots).hasSize(1);
		assertThat(slots.get(0)).containsEntry("effect", "legacy.submit")
			.containsEntry("limit", 3)
			.containsEntry("inUse", 1);
		@SuppressWarnings("unchecked")
		List<Map<String, Object>> holders = (List<Map<String, Object>>) slots.get(0).get("holders");
		assertThat(holders).hasSize(1);
		assertThat(holders.get(0)).containsEntry("slot", 1)
			.containsEntry("intentId", (int) holding)
			.containsEntry("key", "legacy-1")
			.containsEntry("attempt", 1)
			.containsEntry("leaseOwner", "drainer-a");
		// the overview counts what the slots list
		assertThat(get("").body()).contains("{\"effectName\":\"legacy.submit\",\"limit\":3,\"inUse\":1}");
	}

	static String schedule(String alarm) {
		return transactions.execute(
				(status) -> outbox.scheduleAlarm(alarm, Duration.ofHours(1), EffectRequest.of("report.send", alarm)));
	}

	static long inFlight(String key, String leaseUntil) {
		return jdbc.sql("""
				INSERT INTO eec_effect_intent (effect_name, idempotency_key, payload, payload_fingerprint, status,
				                               attempts, lease_owner, lease_expires_at, attempt_started_at)
				VALUES ('legacy.submit', ?, '["x"]', 'f', 'in_flight', 1, 'drainer-a', %s, now())
				RETURNING id""".formatted(leaseUntil)).param(key).query(Long.class).single();
	}

	static Map<String, Object> alarmRow(String name) {
		return jdbc.sql("""
				SELECT paused, decision_reason, decided_by, decided_at IS NOT NULL AS stamped, next_at > now() AS future
				FROM eec_recurring_alarm WHERE name = ?""").param(name).query().singleRow();
	}

	static HttpResponse<String> get(String path) throws IOException, InterruptedException {
		return http.send(HttpRequest.newBuilder(URI.create(base + path)).build(), HttpResponse.BodyHandlers.ofString());
	}

	static HttpResponse<String> post(String path, String body) throws IOException, InterruptedException {
		return http.send(HttpRequest.newBuilder(URI.create(base + path))
			.header("Content-Type", "application/json")
			.POST(HttpRequest.BodyPublishers.ofString(body))
			.build(), HttpResponse.BodyHandlers.ofString());
	}

	static List<Map<String, Object>> list(HttpResponse<String> response) {
		assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
		return json.readValue(response.body(), new TypeReference<List<Map<String, Object>>>() {
		});
	}

	static Map<String, Object> map(HttpResponse<String> response) {
		return json.readValue(response.body(), new TypeReference<Map<String, Object>>() {
		});
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	static class AlarmsApplication {

		@org.springframework.context.annotation.Bean
		Effects effects() {
			return new Effects();
		}

	}

	static class Effects {

		@DurableEffect(name = "report.send")
		public void report(String what) {
		}

		@DurableEffect(name = "legacy.submit", maxConcurrency = 3)
		public void submit(String what) {
		}

	}

}
