package io.ductor.idempotency.autoconfigure;

import java.time.Duration;
import java.util.concurrent.Callable;

import javax.sql.DataSource;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.postgresql.PGConnection;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration;
import org.springframework.boot.webmvc.autoconfigure.WebMvcAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.util.unit.DataSize;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.servlet.mvc.method.annotation.RequestMappingHandlerMapping;

import io.ductor.autoconfigure.DuctorAutoConfiguration;
import io.ductor.idempotency.IdempotencyService;
import io.ductor.idempotency.ReserveOutcome;
import io.ductor.idempotency.internal.DefaultIdempotencyService;
import io.ductor.idempotency.internal.IdempotencyRetentionPurger;
import io.ductor.idempotency.internal.IdempotencySettings;
import io.ductor.idempotency.web.Idempotent;
import io.ductor.idempotency.web.TenantScopeResolver;
import io.ductor.idempotency.web.internal.IdempotencyFilter;
import io.ductor.jdbc.internal.PostgresNotificationListener;
import io.ductor.json.internal.JsonCodec;
import io.ductor.test.PostgresExtension;
import io.ductor.worker.internal.DuctorThreads;
import io.ductor.worker.internal.PeriodicWorker;
import io.ductor.worker.internal.RetentionPurger;

import static org.assertj.core.api.Assertions.assertThat;

class DuctorIdempotencyAutoConfigurationTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	private static final AutoConfigurations CONFIGURATIONS = AutoConfigurations.of(DataSourceAutoConfiguration.class,
			DataSourceTransactionManagerAutoConfiguration.class, TransactionAutoConfiguration.class,
			JacksonAutoConfiguration.class, DuctorAutoConfiguration.class, DuctorIdempotencyAutoConfiguration.class);

	private final ApplicationContextRunner runner = new ApplicationContextRunner().withConfiguration(CONFIGURATIONS)
		.withPropertyValues(datasource());

	private final WebApplicationContextRunner webRunner = new WebApplicationContextRunner()
		.withConfiguration(CONFIGURATIONS)
		.withPropertyValues(datasource());

	private static String[] datasource() {
		return new String[] { "spring.datasource.url=" + postgres.jdbcUrl(),
				"spring.datasource.username=" + postgres.username(),
				"spring.datasource.password=" + (postgres.password() != null ? postgres.password() : ""),
				"spring.datasource.hikari.maximum-pool-size=4" };
	}

	@Test
	void providesTheServiceTheListenerTheSweeperAndTheRetentionPurger() {
		this.runner.run((context) -> {
			assertThat(context).hasNotFailed()
				.hasSingleBean(IdempotencyService.class)
				.hasSingleBean(PostgresNotificationListener.class)
				.hasSingleBean(IdempotencyRetentionPurger.class)
				.hasBean("ductorSweeperWorker")
				.doesNotHaveBean(IdempotencyFilter.class);
			assertThat(context.getBean("ductorSweeperWorker", PeriodicWorker.class).getName()).isEqualTo("sweeper");
			assertThat(context.getBeanProvider(RetentionPurger.class).orderedStream())
				.contains(context.getBean(IdempotencyRetentionPurger.class));
			IdempotencyService service = context.getBean(IdempotencyService.class);
			assertThat(((DefaultIdempotencyService) service).settings()).isEqualTo(IdempotencySettings.defaults());
			assertThat(service.reserve("", "orders", "auto-configured", "fp"))
				.isInstanceOf(ReserveOutcome.Reserved.class);
		});
	}

	@Test
	void bindsTheIdempotencyProperties() {
		this.runner
			.withPropertyValues("ductor.idempotency.pending-ttl=30s", "ductor.idempotency.completed-ttl=1h",
					"ductor.idempotency.retention=2h", "ductor.idempotency.duplicate-policy=reject",
					"ductor.idempotency.wait-timeout=3s", "ductor.idempotency.poll-interval=250ms",
					"ductor.idempotency.header-name=X-Request-Key", "ductor.idempotency.sweeper.interval=5s")
			.run((context) -> {
				DuctorIdempotencyProperties properties = context.getBean(DuctorIdempotencyProperties.class);
				assertThat(properties.headerName()).isEqualTo("X-Request-Key");
				assertThat(properties.maxRequestSize()).isEqualTo(DataSize.ofMegabytes(1));
				assertThat(properties.retention()).isEqualTo(Duration.ofHours(2));
				assertThat(properties.sweeper().interval()).isEqualTo(Duration.ofSeconds(5));
				assertThat(context.getBean(DefaultIdempotencyService.class).settings())
					.isEqualTo(new IdempotencySettings(Duration.ofSeconds(30), Duration.ofHours(1),
							io.ductor.idempotency.DuplicatePolicy.REJECT, Duration.ofSeconds(3),
							Duration.ofMillis(250)));
			});
	}

	@Test
	void theWebPartIsConfiguredOnlyInServletApplicationsWithSpringMvc() {
		this.webRunner.run((context) -> assertThat(context).hasNotFailed()
			.hasSingleBean(IdempotencyFilter.class)
			.hasSingleBean(TenantScopeResolver.class));
		this.webRunner.withClassLoader(new FilteredClassLoader(RequestMappingHandlerMapping.class))
			.run((context) -> assertThat(context).hasNotFailed()
				.doesNotHaveBean(IdempotencyFilter.class)
				.hasSingleBean(IdempotencyService.class));
	}

	@Test
	void anAsynchronousIdempotentHandlerFailsStartUpInOneTransactionModeNamingTheModeThatWorks() {
		this.webRunner.withConfiguration(AutoConfigurations.of(WebMvcAutoConfiguration.class))
			.withUserConfiguration(AsyncController.class)
			.run((context) -> {
				assertThat(context).hasFailed();
				assertThat(context.getStartupFailure())
					.hasStackTraceContaining("@Idempotent handler " + AsyncController.class.getName() + "#later")
					.hasStackTraceContaining("returns java.util.concurrent.Callable<java.lang.String>")
					.hasStackTraceContaining("Use @Idempotent(mode = IdempotencyMode.TWO_PHASE)");
			});
	}

	@Test
	void withoutThePostgresDriverClassesDuplicatesWakeByPollingOnly() {
		this.runner.withClassLoader(new FilteredClassLoader(PGConnection.class))
			.run((context) -> assertThat(context).hasNotFailed()
				.doesNotHaveBean(PostgresNotificationListener.class)
				.hasSingleBean(IdempotencyService.class));
	}

	@Test
	void everyBeanBacksOffWhenTheApplicationDefinesItsOwn() {
		this.webRunner.withUserConfiguration(UserBeans.class).run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(context.getBean(IdempotencyService.class)).isSameAs(context.getBean("userService"));
			assertThat(context.getBean(TenantScopeResolver.class)).isSameAs(context.getBean("userTenants"));
			assertThat(context.getBean(PostgresNotificationListener.class)).isSameAs(context.getBean("userListener"));
			assertThat(context.getBean(IdempotencyRetentionPurger.class)).isSameAs(context.getBean("userPurger"));
			assertThat(context.getBean("ductorSweeperWorker", PeriodicWorker.class).getName())
				.isEqualTo("user-sweeper");
		});
	}

	@Test
	void backsOffWithoutTheBaseConfigurationInsteadOfFailingStartUp() {
		new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class,
					DataSourceTransactionManagerAutoConfiguration.class, TransactionAutoConfiguration.class,
					JacksonAutoConfiguration.class, DuctorIdempotencyAutoConfiguration.class))
			.withPropertyValues(datasource())
			.run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean(IdempotencyService.class));
	}

	@Test
	void theSweeperCanBeTurnedOffAndDuctorEnabledFalseTurnsEverythingOff() {
		this.runner.withPropertyValues("ductor.idempotency.sweeper.enabled=false")
			.run((context) -> assertThat(context).hasNotFailed()
				.doesNotHaveBean("ductorSweeperWorker")
				.hasSingleBean(IdempotencyService.class));
		this.webRunner.withPropertyValues("ductor.enabled=false")
			.run((context) -> assertThat(context).hasNotFailed()
				.doesNotHaveBean(IdempotencyService.class)
				.doesNotHaveBean(PostgresNotificationListener.class)
				.doesNotHaveBean(IdempotencyFilter.class)
				.doesNotHaveBean("ductorSweeperWorker"));
	}

	@Test
	void invalidPropertiesFailStartUpNamingTheProperty() {
		assertStartupFails("ductor.idempotency.pending-ttl=0s", "ductor.idempotency.pending-ttl must be positive");
		assertStartupFails("ductor.idempotency.completed-ttl=-1s", "ductor.idempotency.completed-ttl must be positive");
		assertStartupFails("ductor.idempotency.wait-timeout=0ms", "ductor.idempotency.wait-timeout must be positive");
		assertStartupFails("ductor.idempotency.poll-interval=0ms", "ductor.idempotency.poll-interval must be positive");
		assertStartupFails("ductor.idempotency.retention=1h",
				"ductor.idempotency.retention must not be shorter than ductor.idempotency.completed-ttl (PT24H)");
		assertStartupFails("ductor.idempotency.duplicate-policy=default",
				"ductor.idempotency.duplicate-policy must be wait or reject");
		assertStartupFails("ductor.idempotency.duplicate-policy=maybe", "ductor.idempotency.duplicate-policy");
		assertStartupFails("ductor.idempotency.header-name=Idempotency Key",
				"ductor.idempotency.header-name must be an HTTP header name");
		assertStartupFails("ductor.idempotency.max-request-size=0B",
				"ductor.idempotency.max-request-size must be between 1B and 1GB but was 0B");
		assertStartupFails("ductor.idempotency.max-request-size=2GB",
				"ductor.idempotency.max-request-size must be between 1B and 1GB but was 2147483648B");
		assertStartupFails("ductor.idempotency.sweeper.interval=0s",
				"ductor.idempotency.sweeper.interval must be positive");
		assertStartupFails("ductor.idempotency.max-response-size=0B",
				"ductor.idempotency.max-response-size must be between 1B and 1GB but was 0B");
		assertStartupFails("ductor.idempotency.max-response-size=2GB",
				"ductor.idempotency.max-response-size must be between 1B and 1GB but was 2147483648B");
	}

	private void assertStartupFails(String property, String expectedMessage) {
		this.runner.withPropertyValues(property).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(messages(context)).contains(expectedMessage);
		});
	}

	private static String messages(AssertableApplicationContext context) {
		StringBuilder messages = new StringBuilder();
		for (Throwable ex = context.getStartupFailure(); ex != null; ex = ex.getCause()) {
			messages.append(ex.getMessage()).append('\n');
		}
		return messages.toString();
	}

	@RestController
	static class AsyncController {

		@PostMapping("/later")
		@Idempotent
		Callable<String> later() {
			return () -> "later";
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class UserBeans {

		@Bean
		IdempotencyService userService(DataSource dataSource, JsonCodec json) {
			return new DefaultIdempotencyService(dataSource,
					new org.springframework.jdbc.datasource.DataSourceTransactionManager(dataSource),
					new io.ductor.idempotency.internal.IdempotencyStore(dataSource), json,
					IdempotencySettings.defaults(), null, io.ductor.observation.internal.DuctorInstrumentation.NOOP);
		}

		@Bean
		TenantScopeResolver userTenants() {
			return (request) -> "everyone";
		}

		@Bean
		PostgresNotificationListener userListener(DataSource dataSource) {
			return new PostgresNotificationListener(dataSource, PostgresNotificationListener.DEFAULT_RECEIVE_TIMEOUT,
					PostgresNotificationListener.DEFAULT_MAX_RECONNECT_DELAY,
					PostgresNotificationListener.DEFAULT_VALIDATION_INTERVAL,
					io.ductor.worker.internal.DuctorThreads.platform());
		}

		@Bean
		IdempotencyRetentionPurger userPurger(DataSource dataSource) {
			return new IdempotencyRetentionPurger(dataSource, Duration.ofDays(1));
		}

		@Bean
		PeriodicWorker ductorSweeperWorker(DuctorThreads threads) {
			return new PeriodicWorker(threads, "user-sweeper", Duration.ofHours(1), () -> false,
					io.ductor.observation.internal.DuctorInstrumentation.NOOP);
		}

	}

}
