package io.ductor.autoconfigure;

import java.io.IOException;
import java.net.URL;
import java.util.Collections;
import java.util.Enumeration;

import javax.sql.DataSource;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.flyway.autoconfigure.FlywayAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.jdbc.core.simple.JdbcClient;

import io.ductor.test.PostgresExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An application with Flyway migrations in {@code classpath:db/migration} (this module's
 * test resources hold {@code V1__app_orders.sql}) but without Spring Boot's Flyway
 * auto-configuration: Ductor's starter brings {@code flyway-core} for its own migrations,
 * so nothing runs the application's, and Ductor warns at start-up naming the dependency
 * to add, without failing.
 */
@ExtendWith(OutputCaptureExtension.class)
class ApplicationMigrationsWarningTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	private static final String WARNING = "Flyway migration(s) in classpath:db/migration";

	private final ApplicationContextRunner runner = DuctorContextRunners.onDatabase(postgres,
			DuctorAutoConfiguration.class);

	@BeforeEach
	void forgetTheApplicationsMigration() {
		JdbcClient jdbc = JdbcClient.create(postgres.dataSource());
		jdbc.sql("DROP TABLE IF EXISTS app_order").update();
		jdbc.sql("DROP TABLE IF EXISTS flyway_schema_history").update();
	}

	@Test
	void migrationsWithoutBootsFlywayAreWarnedAboutNamingTheStarterToAdd(CapturedOutput output) {
		this.runner.withClassLoader(new FilteredClassLoader(FlywayAutoConfiguration.class)).run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(output).contains(WARNING)
				.contains("V1__app_orders.sql")
				.contains("org.springframework.boot:spring-boot-starter-flyway");
			assertThat(output.toString().split(java.util.regex.Pattern.quote(WARNING), -1)).as("warned once")
				.hasSize(2);
			assertThat(JdbcClient.create(context.getBean(DataSource.class))
				.sql("SELECT to_regclass('app_order') IS NULL")
				.query(Boolean.class)
				.single()).as("the application's migration did not run").isTrue();
		});
	}

	@Test
	void withBootsFlywayTheMigrationsRunAndNothingIsSaid(CapturedOutput output) {
		this.runner.withConfiguration(AutoConfigurations.of(FlywayAutoConfiguration.class))
			.withPropertyValues("spring.flyway.baseline-on-migrate=true", "spring.flyway.baseline-version=0")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(output).doesNotContain(WARNING);
				assertThat(JdbcClient.create(context.getBean(DataSource.class))
					.sql("SELECT to_regclass('app_order') IS NOT NULL")
					.query(Boolean.class)
					.single()).as("the application's migration ran").isTrue();
			});
	}

	@Test
	void withoutMigrationsNothingIsSaid(CapturedOutput output) {
		ClassLoader withoutMigrations = new ClassLoader(getClass().getClassLoader()) {

			@Override
			public Enumeration<URL> getResources(String name) throws IOException {
				return name.startsWith("db/migration") ? Collections.emptyEnumeration() : super.getResources(name);
			}

			@Override
			public URL getResource(String name) {
				return name.startsWith("db/migration") ? null : super.getResource(name);
			}

		};
		this.runner.withClassLoader(new FilteredClassLoader(withoutMigrations, FlywayAutoConfiguration.class))
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(output).doesNotContain(WARNING);
			});
	}

}
