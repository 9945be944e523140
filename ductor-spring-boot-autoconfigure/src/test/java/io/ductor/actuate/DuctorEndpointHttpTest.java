package io.ductor.actuate;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.UUID;

import javax.sql.DataSource;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.simple.JdbcClient;

import io.ductor.actuate.internal.DuctorEndpoint;
import io.ductor.test.PostgresExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The {@code ductor} endpoint over real HTTP: what a caller sends reaches the audit line
 * as one line, or is refused with a 400 naming the field.
 */
@ExtendWith(OutputCaptureExtension.class)
class DuctorEndpointHttpTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	static ConfigurableApplicationContext app;

	static HttpClient http;

	static String base;

	static JdbcClient jdbc;

	@BeforeAll
	static void start() {
		app = new SpringApplicationBuilder(EndpointApplication.class).properties(postgres.springProperties())
			.properties("server.port=0", "management.endpoints.web.exposure.include=ductor",
					"spring.web.error.include-message=always", "ductor.effects.drainer.enabled=false",
					"ductor.effects.reconciler.enabled=false", "ductor.retention.enabled=false",
					"ductor.idempotency.sweeper.enabled=false")
			.run();
		base = "http://localhost:" + app.getEnvironment().getProperty("local.server.port") + "/actuator/ductor";
		http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
		jdbc = JdbcClient.create(app.getBean(DataSource.class));
	}

	@AfterAll
	static void stop() {
		app.close();
	}

	@Test
	void aResolutionWithCrLfOnRetryIsRefusedWithA400NamingTheFieldAndChangesAndLogsNothing(CapturedOutput output)
			throws Exception {
		long id = failedIntent();
		HttpResponse<String> response = post("/" + id,
				"{\"action\": \"retry\", \"resolution\": \"ok\\r\\nINFO ductor endpoint: forged audit line\"}");
		assertThat(response.statusCode()).isEqualTo(400);
		assertThat(response.body())
			.contains("resolution must be one line of text without control characters, found U+000D at index 2");
		assertThat(status(id)).isEqualTo("failed");
		assertThat(output.getAll()).doesNotContain("forged audit line");
	}

	@Test
	void aResolutionWithALineSeparatorOnCancelIsRefused(CapturedOutput output) throws Exception {
		long id = failedIntent();
		HttpResponse<String> response = post("/" + id,
				"{\"action\": \"cancel\", \"resolution\": \"ok\\u2028forged after a line separator\"}");
		assertThat(response.statusCode()).isEqualTo(400);
		assertThat(response.body()).contains("resolution must be one line of text");
		assertThat(status(id)).isEqualTo("failed");
		assertThat(output.getAll()).doesNotContain("forged after a line separator");
	}

	@Test
	void aResolutionLongerThanTheLimitIsRefused() throws Exception {
		long id = failedIntent();
		HttpResponse<String> response = post("/" + id,
				"{\"action\": \"cancel\", \"resolution\": \"" + "x".repeat(DuctorEndpoint.MAX_TEXT_LENGTH + 1) + "\"}");
		assertThat(response.statusCode()).isEqualTo(400);
		assertThat(response.body()).contains("resolution must be at most 200 characters but has 201");
		assertThat(status(id)).isEqualTo("failed");
	}

	@Test
	void anActionOrEffectWithControlCharactersIsRefusedWithA400NotA500(CapturedOutput output) throws Exception {
		long id = failedIntent();
		HttpResponse<String> action = post("/" + id, "{\"action\": \"retry\\nforged action\"}");
		assertThat(action.statusCode()).isEqualTo(400);
		assertThat(action.body()).contains("action must be one line of text");
		HttpResponse<String> retryAll = post("", "{\"effect\": \"gone\\nforged effect\", \"status\": \"failed\"}");
		assertThat(retryAll.statusCode()).isEqualTo(400);
		assertThat(retryAll.body()).contains("effect must be one line of text");
		assertThat(status(id)).isEqualTo("failed");
		assertThat(output.getAll()).doesNotContain("forged action").doesNotContain("forged effect");
	}

	@Test
	void aOneLineNoteOnRetryIsActedOnAndLoggedWithTheAction(CapturedOutput output) throws Exception {
		long id = failedIntent();
		HttpResponse<String> response = post("/" + id, "{\"action\": \"retry\", \"resolution\": \"ticket OPS-42\"}");
		assertThat(response.statusCode()).isEqualTo(200);
		assertThat(status(id)).isEqualTo("pending");
		assertThat(output.getAll()).contains("ductor endpoint: retry (ticket OPS-42) on intent " + id);
	}

	static long failedIntent() {
		return jdbc.sql("""
				INSERT INTO eec_effect_intent (effect_name, idempotency_key, payload, payload_fingerprint, status,
				                               attempts, max_attempts, last_error, finished_at)
				VALUES ('gone', ?, '[]'::jsonb, 'fp', 'failed', 1, 1, 'failed in a test', now())
				RETURNING id""").param("key-" + UUID.randomUUID()).query(Long.class).single();
	}

	static String status(long id) {
		return jdbc.sql("SELECT status FROM eec_effect_intent WHERE id = ?").param(id).query(String.class).single();
	}

	static HttpResponse<String> post(String path, String json) throws IOException, InterruptedException {
		return http.send(HttpRequest.newBuilder(URI.create(base + path))
			.header("Content-Type", "application/json")
			.POST(HttpRequest.BodyPublishers.ofString(json))
			.build(), HttpResponse.BodyHandlers.ofString());
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	static class EndpointApplication {

	}

}
