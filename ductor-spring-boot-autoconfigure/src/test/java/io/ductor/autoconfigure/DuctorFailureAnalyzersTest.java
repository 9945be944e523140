package io.ductor.autoconfigure;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.simple.JdbcClient;

import io.ductor.effect.DurableEffect;
import io.ductor.effect.autoconfigure.DuctorEffectsAutoConfiguration;
import io.ductor.test.PostgresExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;

/**
 * A start-up that fails on Ductor ends with Spring Boot's failure report (Description,
 * Action) written by Ductor's failure analyzers, as an application started with
 * {@code SpringApplication.run} prints it: for bad properties, bad effect declarations,
 * an unreachable database and migrations that cannot be applied or are missing.
 */
@ExtendWith(OutputCaptureExtension.class)
class DuctorFailureAnalyzersTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	@Test
	void aValueOutOfRangeIsReportedWithThePropertyAndWhereItWasSet(CapturedOutput output) {
		assertFailsToStart(List.of(), "--ductor.effects.max-attempts=0");
		assertThat(report(output))
			.contains("Invalid Ductor configuration: ductor.effects.max-attempts must be at least 1 but was 0")
			.contains("commandLineArgs")
			.contains("Correct ductor.effects.max-attempts");
	}

	@Test
	void aKeyDuctorDoesNotReadIsReportedWithTheClosestKey(CapturedOutput output) {
		assertFailsToStart(List.of(), "--ductor.efects.max-attempts=3");
		assertThat(report(output)).contains("Property 'ductor.efects.max-attempts'")
			.contains("is not a property of Ductor; did you mean 'ductor.effects.max-attempts'?")
			.contains("Correct or remove the property");
	}

	@Test
	void anOverrideOfNoEffectIsReportedWithTheClosestEffect(CapturedOutput output) {
		assertFailsToStart(List.of(Mailer.class), "--ductor.effects.overrides.mailer.sennd.max-attempts=3");
		assertThat(report(output))
			.contains("ductor.effects.overrides.mailer.sennd.max-attempts names an effect that does not exist")
			.contains("did you mean 'mailer.send'?");
	}

	@Test
	void anEffectAProxyCannotInterceptIsReportedWithWhatAnEffectMustBe(CapturedOutput output) {
		assertFailsToStart(List.of(FinalEffect.class));
		assertThat(report(output)).contains("Ductor cannot run a durable effect as it is declared or used")
			.contains("must not be final: Spring's proxy cannot intercept it")
			.contains("An effect is a public, non-final, void method of a Spring bean");
	}

	@Test
	void anUnreachableDatabaseIsReportedWithItsUrl(CapturedOutput output) {
		assertFailsToStart(List.of(), "--spring.datasource.url=jdbc:postgresql://127.0.0.1:1/shop",
				"--spring.datasource.hikari.connection-timeout=1000");
		assertThat(report(output)).contains("Ductor could not reach its database at jdbc:postgresql://127.0.0.1:1/shop")
			.contains("point spring.datasource.url at one that accepts connections");
	}

	@Test
	void tablesThatAreNotUpToDateInValidateModeAreReportedWithHowToApplyThem(CapturedOutput output) {
		String url = schema("validate_empty");
		assertFailsToStart(List.of(), "--spring.datasource.url=" + url, "--ductor.schema.mode=validate");
		assertThat(report(output)).contains("Ductor's tables are not up to date and ductor.schema.mode=validate")
			.contains("Apply Ductor's migrations (classpath:db/ductor/migration")
			.contains("or set ductor.schema.mode=migrate");
	}

	@Test
	void aMigrationThatFailsIsReportedWithWhatItNeeds(CapturedOutput output) {
		String url = schema("clashing");
		JdbcClient.create(postgres.dataSource()).sql("CREATE TABLE clashing.eec_run (unrelated int)").update();
		assertFailsToStart(List.of(), "--spring.datasource.url=" + url);
		assertThat(report(output)).contains("Ductor could not migrate its tables (ductor.schema.mode=migrate)")
			.contains("no table of the application has the name of one of Ductor's (eec_*)");
	}

	/** A schema of its own in the test's database, and the JDBC URL that uses it. */
	private static String schema(String name) {
		JdbcClient.create(postgres.dataSource()).sql("CREATE SCHEMA IF NOT EXISTS " + name).update();
		String url = postgres.jdbcUrl();
		return url + (url.contains("?") ? "&" : "?") + "currentSchema=" + name;
	}

	private static void assertFailsToStart(List<Class<?>> beans, String... args) {
		List<Class<?>> sources = new ArrayList<>(List.of(Application.class));
		sources.addAll(beans);
		List<String> arguments = new ArrayList<>();
		for (String property : postgres.springProperties()) {
			String key = "--" + property.substring(0, property.indexOf('=') + 1);
			if (List.of(args).stream().noneMatch((arg) -> arg.startsWith(key))) {
				arguments.add("--" + property);
			}
		}
		arguments.add("--spring.datasource.hikari.maximum-pool-size=2");
		arguments.addAll(List.of(args));
		assertThatException().isThrownBy(
				() -> new SpringApplicationBuilder(sources.toArray(Class<?>[]::new)).web(WebApplicationType.NONE)
					.run(arguments.toArray(String[]::new)));
	}

	/** The failure report Spring Boot logs: from its banner to the end of the output. */
	private static String report(CapturedOutput output) {
		String all = output.getAll();
		int start = all.lastIndexOf("APPLICATION FAILED TO START");
		assertThat(start).as("a failure report in the output").isNotNegative();
		String report = all.substring(start);
		assertThat(report).contains("Description:").contains("Action:");
		return report;
	}

	@Configuration(proxyBeanMethods = false)
	@ImportAutoConfiguration({ DataSourceAutoConfiguration.class, DataSourceTransactionManagerAutoConfiguration.class,
			TransactionAutoConfiguration.class, JacksonAutoConfiguration.class, DuctorAutoConfiguration.class,
			DuctorEffectsAutoConfiguration.class })
	static class Application {

	}

	public static class Mailer {

		@DurableEffect(name = "mailer.send")
		public void send(String to) {
		}

	}

	public static class FinalEffect {

		@DurableEffect(name = "final.effect")
		public final void send(String to) {
		}

	}

}
