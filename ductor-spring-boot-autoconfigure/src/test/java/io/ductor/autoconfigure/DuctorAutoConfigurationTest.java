package io.ductor.autoconfigure;

import java.util.List;

import java.util.UUID;

import javax.sql.DataSource;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import tools.jackson.databind.PropertyNamingStrategies;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.flyway.autoconfigure.FlywayAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.sql.init.dependency.DependsOnDatabaseInitialization;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;

import io.ductor.effect.autoconfigure.DuctorEffectsAutoConfiguration;
import io.ductor.idempotency.autoconfigure.DuctorIdempotencyAutoConfiguration;
import io.ductor.jdbc.internal.DuctorSchema;
import io.ductor.jdbc.SchemaMode;
import io.ductor.json.internal.JsonCodec;
import io.ductor.run.StartOutcome;
import io.ductor.run.TickService;
import io.ductor.run.internal.DefaultTickService;
import io.ductor.test.PostgresExtension;
import io.ductor.test.TestDatabase;
import io.ductor.test.TestDatabases;
import io.ductor.worker.internal.Backoff;

import static org.assertj.core.api.Assertions.assertThat;

class DuctorAutoConfigurationTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	private final ApplicationContextRunner runner = runnerOn(postgres.database());

	static ApplicationContextRunner runnerOn(TestDatabase database) {
		return DuctorContextRunners.onDatabase(database, DuctorAutoConfiguration.class);
	}

	@Test
	void migratesTheSchemaAndProvidesATickServiceOnTheApplicationDataSource() {
		this.runner.run((context) -> {
			assertThat(context).hasNotFailed()
				.hasSingleBean(TickService.class)
				.hasSingleBean(DuctorSchema.class)
				.hasSingleBean(JsonCodec.class);
			JdbcClient jdbc = JdbcClient.create(context.getBean(DataSource.class));
			assertThat(jdbc.sql("SELECT count(*) FROM ductor_schema_history WHERE version = '1' AND success")
				.query(Long.class)
				.single()).isOne();
			TickService ticks = context.getBean(TickService.class);
			String runId = UUID.randomUUID().toString();
			assertThat(ticks.start("counter", runId, 0)).isEqualTo(StartOutcome.CREATED);
			assertThat(ticks.tick(runId, "one", Integer.class, (state, tick) -> state + 1).state()).isEqualTo(1);
		});
	}

	@Test
	void everyBeanBacksOffWhenTheApplicationDefinesItsOwn() {
		this.runner.withUserConfiguration(UserBeans.class).run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(context.getBean(TickService.class)).isSameAs(context.getBean("userTicks"));
			assertThat(context.getBean(JsonCodec.class)).isSameAs(context.getBean("userCodec"));
			assertThat(context.getBean(DuctorSchema.class)).isSameAs(context.getBean("userSchema"));
		});
	}

	@Test
	void ductorEnabledFalseTurnsEverythingOff() {
		this.runner.withPropertyValues("ductor.enabled=false").run((context) -> {
			assertThat(context).hasNotFailed()
				.doesNotHaveBean(TickService.class)
				.doesNotHaveBean(DuctorSchema.class)
				.doesNotHaveBean(JsonCodec.class)
				.doesNotHaveBean(DuctorProperties.class);
		});
	}

	@Test
	void backsOffWithoutADataSource() {
		new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(JacksonAutoConfiguration.class, DuctorAutoConfiguration.class))
			.run((context) -> assertThat(context).hasNotFailed()
				.doesNotHaveBean(TickService.class)
				.doesNotHaveBean(DuctorSchema.class));
	}

	@Test
	void backsOffWithoutSpringJdbc() {
		this.runner.withClassLoader(new FilteredClassLoader(JdbcClient.class))
			.run((context) -> assertThat(context).doesNotHaveBean(TickService.class));
	}

	@Test
	void worksWithoutJacksonAutoConfiguration() {
		this.runner
			.withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class,
					DataSourceTransactionManagerAutoConfiguration.class, DuctorAutoConfiguration.class))
			.run((context) -> assertThat(context).hasNotFailed().hasSingleBean(JsonCodec.class));
	}

	@Test
	void invalidPropertiesFailStartUpNamingTheProperty() {
		assertStartupFails("ductor.ticks.max-attempts=0", "ductor.ticks.max-attempts must be at least 1 but was 0");
		assertStartupFails("ductor.ticks.backoff.initial=0ms", "ductor.ticks.backoff.initial must be positive");
		assertStartupFails("ductor.ticks.backoff.max=1ms",
				"ductor.ticks.backoff.max must not be shorter than ductor.ticks.backoff.initial");
		assertStartupFails("ductor.ticks.backoff.multiplier=0.5", "ductor.ticks.backoff.multiplier must be at least 1");
		assertStartupFails("ductor.schema.mode=sideways", "ductor.schema.mode");
		assertStartupFails("ductor.ticks.backoff.initial=soon", "ductor.ticks.backoff.initial");
	}

	@Test
	void usesTheApplicationsJsonMapper() {
		this.runner
			.withBean(JsonMapper.class,
					() -> JsonMapper.builder().propertyNamingStrategy(PropertyNamingStrategies.SNAKE_CASE).build())
			.run((context) -> {
				String runId = UUID.randomUUID().toString();
				context.getBean(TickService.class).start("order", runId, new OrderState("alice", 2));
				String stored = JdbcClient.create(context.getBean(DataSource.class))
					.sql("SELECT state->>'customer_name' || '/' || (state->>'item_count') FROM eec_run WHERE id = ?")
					.param(runId)
					.query(String.class)
					.single();
				assertThat(stored).isEqualTo("alice/2");
			});
	}

	@Test
	void validateModeFailsOnAnUnmigratedSchemaAndPassesOnAMigratedOne() {
		TestDatabase fresh = TestDatabases.create();
		try {
			ApplicationContextRunner freshRunner = runnerOn(fresh);
			freshRunner.withPropertyValues("ductor.schema.mode=validate").run((context) -> {
				assertThat(context).hasFailed();
				assertThat(messages(context)).contains("ductor.schema.mode=validate").contains("ductor_schema_history");
			});
			freshRunner.run((context) -> assertThat(context).hasNotFailed());
			freshRunner.withPropertyValues("ductor.schema.mode=validate")
				.run((context) -> assertThat(context).hasNotFailed().hasSingleBean(TickService.class));
		}
		finally {
			TestDatabases.drop(fresh);
		}
	}

	@Test
	void noneModeLeavesTheSchemaAlone() {
		TestDatabase fresh = TestDatabases.create();
		try {
			runnerOn(fresh).withPropertyValues("ductor.schema.mode=none").run((context) -> {
				assertThat(context).hasNotFailed().hasSingleBean(TickService.class);
				assertThat(JdbcClient.create(context.getBean(DataSource.class))
					.sql("SELECT count(*) FROM pg_tables WHERE tablename LIKE 'eec_%' OR tablename LIKE 'ductor_%'")
					.query(Long.class)
					.single()).isZero();
			});
		}
		finally {
			TestDatabases.drop(fresh);
		}
	}

	@Test
	void theApplicationsOwnFlywayMigrationsKeepRunningBesideDuctors() {
		TestDatabase fresh = TestDatabases.create();
		try {
			ApplicationContextRunner withFlyway = runnerOn(fresh)
				.withConfiguration(AutoConfigurations.of(FlywayAutoConfiguration.class));
			for (int start = 1; start <= 2; start++) {
				withFlyway.run((context) -> {
					assertThat(context).hasNotFailed().hasSingleBean(org.flywaydb.core.Flyway.class);
					JdbcClient jdbc = JdbcClient.create(context.getBean(DataSource.class));
					assertThat(
							jdbc.sql("SELECT version FROM flyway_schema_history WHERE success ORDER BY installed_rank")
								.query(String.class)
								.list())
						.containsExactly("1");
					assertThat(jdbc.sql("SELECT count(*) FROM app_order").query(Long.class).single()).isZero();
					assertThat(jdbc
						.sql("SELECT version FROM ductor_schema_history WHERE success AND version IS NOT NULL"
								+ " ORDER BY installed_rank")
						.query(String.class)
						.list()).containsExactly("0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12",
								"13", "14", "15", "16");
					assertThat(jdbc.sql("SELECT count(*) FROM eec_run").query(Long.class).single()).isZero();
				});
			}
		}
		finally {
			TestDatabases.drop(fresh);
		}
	}

	@Test
	void aUserBeanThatDependsOnDatabaseInitializationReadsDuctorsTablesAtStartUp() {
		TestDatabase fresh = TestDatabases.create();
		try {
			runnerOn(fresh).withUserConfiguration(ReadsDuctorTablesAtStartUp.class).run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(context.getBean(IntentCountAtStartUp.class).intents()).isZero();
			});
		}
		finally {
			TestDatabases.drop(fresh);
		}
	}

	@Test
	void ductorsBeansThatUseItsTablesAreCreatedAfterItsSchemaWhichRunsAfterTheApplicationsFlyway() {
		TestDatabase fresh = TestDatabases.create();
		try {
			runnerOn(fresh)
				.withConfiguration(AutoConfigurations.of(FlywayAutoConfiguration.class,
						DuctorEffectsAutoConfiguration.class, DuctorIdempotencyAutoConfiguration.class))
				.run((context) -> {
					assertThat(context).hasNotFailed();
					ConfigurableListableBeanFactory beans = context.getBeanFactory();
					for (String name : List.of("tickService", "ductorBacklog", "ductorRetentionWorker",
							"ductorNotificationListener", "ductorIntentRecorder", "ductorEffectSlots",
							"idempotencyService", "ductorSweeperWorker")) {
						assertThat(beans.getBeanDefinition(name).getDependsOn()).as(name).contains("ductorSchema");
					}
					assertThat(beans.getBeanDefinition("ductorSchema").getDependsOn()).contains("flywayInitializer");
				});
		}
		finally {
			TestDatabases.drop(fresh);
		}
	}

	private void assertStartupFails(String property, String expectedMessage) {
		this.runner.withPropertyValues(property).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(messages(context)).contains(expectedMessage);
		});
	}

	static String messages(AssertableApplicationContext context) {
		StringBuilder messages = new StringBuilder();
		for (Throwable ex = context.getStartupFailure(); ex != null; ex = ex.getCause()) {
			messages.append(ex.getMessage()).append('\n');
		}
		return messages.toString();
	}

	record OrderState(String customerName, int itemCount) {
	}

	record IntentCountAtStartUp(long intents) {
	}

	@Configuration(proxyBeanMethods = false)
	static class ReadsDuctorTablesAtStartUp {

		@Bean
		@DependsOnDatabaseInitialization
		IntentCountAtStartUp intentCountAtStartUp(DataSource dataSource) {
			return new IntentCountAtStartUp(JdbcClient.create(dataSource)
				.sql("SELECT count(*) FROM eec_effect_intent")
				.query(Long.class)
				.single());
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class UserBeans {

		@Bean
		JsonCodec userCodec() {
			return new JsonCodec(JsonMapper.builder().build());
		}

		@Bean
		DuctorSchema userSchema(DataSource dataSource) {
			return new DuctorSchema(dataSource, SchemaMode.MIGRATE);
		}

		@Bean
		TickService userTicks(DataSource dataSource, JsonCodec json) {
			return new DefaultTickService(dataSource, new DataSourceTransactionManager(dataSource),
					new io.ductor.run.internal.RunStore(
							org.springframework.jdbc.core.simple.JdbcClient.create(dataSource)),
					json, 3, new Backoff(java.time.Duration.ofMillis(1), java.time.Duration.ofMillis(2), 2),
					io.ductor.observation.internal.DuctorInstrumentation.NOOP,
					io.ductor.run.internal.RunFailureHandler.NONE);
		}

	}

}
