package io.ductor.actuate;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.UUID;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.simple.JdbcClient;

import io.ductor.test.PostgresExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The {@code ductor} endpoint over HTTP: an action the intent's state refuses is a 400
 * with the reason.
 */
class DuctorEndpointRefusalHttpTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	static ConfigurableApplicationContext app;

	static HttpClient http;

	static String base;

	static JdbcClient jdbc;

	@BeforeAll
	static void start() {
		app = new SpringApplicationBuilder(Application.class).properties(postgres.springProperties())
			.properties("server.port=0", "management.endpoints.web.exposure.include=ductor",
					"ductor.effects.reconciler.interval=1h", "ductor.retention.enabled=false",
					"spring.main.banner-mode=off")
			.run();
		base = "http://localhost:" + app.getEnvironment().getProperty("local.server.port");
		http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
		jdbc = JdbcClient.create(postgres.dataSource());
	}

	@AfterAll
	static void stop() {
		app.close();
	}

	static long insert(String key, String status, String alarm) {
		return jdbc.sql("""
				INSERT INTO eec_effect_intent (effect_name, idempotency_key, payload, payload_fingerprint, max_attempts,
				    status, attempts, alarm_name, next_attempt_at)
				VALUES ('Mailer.remind', ?, '["x"]', 'f', 3, ?, 1, ?, now() + interval '1 hour') RETURNING id""")
			.params(key, status, alarm)
			.query(Long.class)
			.single();
	}

	static HttpResponse<String> act(long id, String body) throws Exception {
		return http.send(HttpRequest.newBuilder(URI.create(base + "/actuator/ductor/" + id))
			.header("Content-Type", "application/json")
			.POST(HttpRequest.BodyPublishers.ofString(body))
			.build(), HttpResponse.BodyHandlers.ofString());
	}

	@Test
	void retryingAnOccurrenceOfARescheduledAlarmIsRefusedWith409AndTheReasonNotAServerError() throws Exception {
		String alarm = "reminder-" + UUID.randomUUID();
		long pending = insert("newer-" + alarm, "pending", alarm);
		long failed = insert("older-" + alarm, "failed", alarm);
		HttpResponse<String> response = act(failed, "{\"action\": \"retry\"}");
		assertThat(response.statusCode()).isEqualTo(409);
		assertThat(response.body()).contains("\"error\":\"Conflict\"")
			.contains("is an occurrence of alarm '" + alarm + "'")
			.contains("intent " + pending + " (key 'newer-" + alarm + "') is its pending occurrence");
		assertThat(jdbc.sql("SELECT status FROM eec_effect_intent WHERE id = ?")
			.param(failed)
			.query(String.class)
			.single()).isEqualTo("failed");
	}

	@Test
	void anActionTheStatusDoesNotAllowIsRefusedWith409AndAnUnknownActionWith400() throws Exception {
		long pending = insert("pending-" + UUID.randomUUID(), "pending", null);
		HttpResponse<String> refused = act(pending, "{\"action\": \"resolve\", \"resolution\": \"mark_done\"}");
		assertThat(refused.statusCode()).isEqualTo(409);
		assertThat(refused.body()).contains("Intent " + pending + " is pending");
		HttpResponse<String> unknown = act(pending, "{\"action\": \"explode\"}");
		assertThat(unknown.statusCode()).isEqualTo(400);
		assertThat(unknown.body()).contains("action must be retry, cancel or resolve but was 'explode'");
		HttpResponse<String> cancelled = act(pending, "{\"action\": \"cancel\"}");
		assertThat(cancelled.statusCode()).isEqualTo(200);
		assertThat(cancelled.body()).contains("\"status\":\"CANCELLED\"");
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	static class Application {

	}

}
