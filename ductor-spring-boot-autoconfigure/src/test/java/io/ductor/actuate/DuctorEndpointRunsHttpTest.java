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
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.simple.JdbcClient;

import io.ductor.test.PostgresExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code GET /actuator/ductor/runs/{runId}}: a run's compensation chain, in the order it
 * runs.
 */
class DuctorEndpointRunsHttpTest {

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
					"ductor.effects.drainer.enabled=false", "ductor.effects.reconciler.enabled=false",
					"ductor.retention.enabled=false", "ductor.idempotency.sweeper.enabled=false")
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
	void aRunsChainListsItsCompensationsLatestTickFirstWithTheirIntents() throws Exception {
		String run = "order-" + UUID.randomUUID();
		jdbc.sql(
				"INSERT INTO eec_run (id, type, status, state, compensation) VALUES (?, 'order', 'failed', '0', 'compensating')")
			.param(run)
			.update();
		jdbc.sql("""
				INSERT INTO eec_run_compensation (run_id, original_key, seq, effect_name, payload)
				VALUES (?, ?, 1, 'stock.release', '[]'), (?, ?, 2, 'payment.refund', '[]')""")
			.params(run, "reserve:" + run, run, "charge:" + run)
			.update();
		jdbc.sql("""
				INSERT INTO eec_effect_intent (effect_name, idempotency_key, payload, payload_fingerprint, status,
				                               attempts, max_attempts, run_id)
				VALUES ('payment.charge', ?, '[]', 'f', 'completed', 1, 1, ?),
				       ('payment.refund', ?, '[]', 'f', 'pending', 0, 1, ?)""")
			.params("charge:" + run, run, "compensate:charge:" + run, run)
			.update();
		HttpResponse<String> response = get("/runs/" + run);
		assertThat(response.statusCode()).isEqualTo(200);
		assertThat(response.body()).contains("\"compensation\":\"COMPENSATING\"");
		assertThat(response.body().indexOf("\"originalKey\":\"charge:" + run)).isGreaterThan(0)
			.isLessThan(response.body().indexOf("\"originalKey\":\"reserve:" + run));
		assertThat(response.body()).contains("\"idempotencyKey\":\"compensate:charge:" + run + "\"");
	}

	@Test
	void anotherPathIsRefusedWithA400() throws Exception {
		assertThat(get("/flights/x").statusCode()).isEqualTo(400);
	}

	static HttpResponse<String> get(String path) throws IOException, InterruptedException {
		return http.send(HttpRequest.newBuilder(URI.create(base + path)).GET().build(),
				HttpResponse.BodyHandlers.ofString());
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	static class EndpointApplication {

	}

}
