package io.ductor.console;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import javax.sql.DataSource;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.simple.JdbcClient;

import io.ductor.test.PostgresExtension;

/**
 * An application with the console enabled on a test database, its workers off so that
 * intents stay where a test puts them.
 */
final class ConsoleApp implements AutoCloseable {

	/**
	 * Spring Security is on the test class path; an application without it excludes
	 * these.
	 */
	static final String WITHOUT_SECURITY = "spring.autoconfigure.exclude="
			+ "org.springframework.boot.security.autoconfigure.SecurityAutoConfiguration,"
			+ "org.springframework.boot.security.autoconfigure.UserDetailsServiceAutoConfiguration,"
			+ "org.springframework.boot.security.autoconfigure.web.servlet.ServletWebSecurityAutoConfiguration,"
			+ "org.springframework.boot.security.autoconfigure.web.servlet.SecurityFilterAutoConfiguration,"
			+ "org.springframework.boot.security.autoconfigure.actuate.web.servlet.ManagementWebSecurityAutoConfiguration";

	final ConfigurableApplicationContext context;

	final JdbcClient jdbc;

	private ConsoleApp(ConfigurableApplicationContext context) {
		this.context = context;
		this.jdbc = JdbcClient.create(context.getBean(DataSource.class));
	}

	static ConsoleApp start(PostgresExtension postgres, Class<?> application, String... more) {
		List<String> properties = new ArrayList<>(List.of(postgres.springProperties()));
		properties.addAll(List.of("server.port=0", "management.endpoints.web.exposure.include=ductor",
				"ductor.console.enabled=true", "ductor.console.hidden-fields=cardNumber",
				"ductor.effects.drainer.enabled=false", "ductor.effects.reconciler.enabled=false",
				"ductor.retention.enabled=false", "ductor.idempotency.sweeper.enabled=false"));
		properties.addAll(List.of(more));
		return new ConsoleApp(
				new SpringApplicationBuilder(application).properties(properties.toArray(String[]::new)).run());
	}

	String url(String path) {
		return "http://localhost:" + ((WebServerApplicationContext) this.context).getWebServer().getPort() + path;
	}

	static Path screenshot(String name) {
		return Path.of(System.getProperty("ductor.console.screenshots", "target/screenshots"), name);
	}

	/** Records a parked intent and answers its id. */
	long park(String effect, String key, String status, String payload, String runId) {
		return this.jdbc.sql("""
				INSERT INTO eec_effect_intent (effect_name, idempotency_key, payload, payload_fingerprint, status,
				                               receiver, attempts, max_attempts, run_id, last_error, ordering_key)
				VALUES (?, ?, CAST(? AS jsonb), 'f', ?, 'NOT_IDEMPOTENT', 3, 3, ?,
				        'the mail relay closed the connection after DATA: outcome unknown', ?)
				RETURNING id""")
			.params(effect, key, payload, status, runId, "customer-" + key)
			.query(Long.class)
			.single();
	}

	@Override
	public void close() {
		this.context.close();
	}

	/** The application without Spring Security. */
	@SpringBootConfiguration
	@EnableAutoConfiguration
	static class Open {

	}

}
