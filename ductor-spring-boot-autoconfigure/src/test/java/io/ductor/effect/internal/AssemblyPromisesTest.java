package io.ductor.effect.internal;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;

import javax.sql.DataSource;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;
import tools.jackson.databind.PropertyNamingStrategies;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.boot.LazyInitializationBeanFactoryPostProcessor;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.SmartLifecycle;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import io.ductor.autoconfigure.DuctorAutoConfiguration;
import io.ductor.autoconfigure.DuctorContextRunners;
import io.ductor.effect.DurableEffect;
import io.ductor.effect.autoconfigure.DuctorEffectsAutoConfiguration;
import io.ductor.idempotency.autoconfigure.DuctorIdempotencyAutoConfiguration;
import io.ductor.json.internal.JsonCodec;
import io.ductor.metrics.autoconfigure.DuctorMetricsAutoConfiguration;
import io.ductor.observation.autoconfigure.DuctorObservationAutoConfiguration;
import io.ductor.run.TickService;
import io.ductor.run.internal.RunFailureHandler;
import io.ductor.test.PostgresExtension;
import io.ductor.worker.internal.DuctorThreads;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Promises of the assembly of Ductor as beans, read from the documentation and held to on
 * PostgreSQL: what an application's ordinary beans and settings do to the beans Ductor
 * uses, its start and its stop.
 */
@ExtendWith(OutputCaptureExtension.class)
class AssemblyPromisesTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	private final ApplicationContextRunner runner = DuctorContextRunners
		.onDatabase(postgres, DuctorAutoConfiguration.class, DuctorEffectsAutoConfiguration.class)
		.withPropertyValues("ductor.effects.drainer.poll-interval=100ms")
		.withUserConfiguration(EffectsConfiguration.class);

	/**
	 * The drainer of an instance is woken by another instance's commit
	 * (docs/internals.md: the notification listener), whatever
	 * {@code spring.main.lazy-initialization} says: the subscription that wakes it is a
	 * bean nothing depends on.
	 */
	@Test
	void withLazyInitializationAnotherInstancesCommitStillWakesTheDrainer() {
		// as SpringApplication does for spring.main.lazy-initialization=true
		wakesTheDrainerOfAnotherInstance(this.runner.withInitializer(
				(context) -> context.addBeanFactoryPostProcessor(new LazyInitializationBeanFactoryPostProcessor())),
				"lazily");
	}

	/** The same, without lazy initialization: what the test above expects does happen. */
	@Test
	void anotherInstancesCommitWakesTheDrainer() {
		wakesTheDrainerOfAnotherInstance(this.runner, "eagerly");
	}

	private void wakesTheDrainerOfAnotherInstance(ApplicationContextRunner runner, String how) {
		String text = "committed by the other instance, woken " + how;
		runner.withPropertyValues("ductor.effects.drainer.poll-interval=1h").run((listening) -> {
			assertThat(listening).hasNotFailed();
			Effects woken = listening.getBean(Effects.class);
			// the drainer's first round at start-up has passed: only a wake-up makes it
			// claim again within the hour
			await().atMost(Duration.ofSeconds(20))
				.until(() -> listening.getBean(EffectDrainer.class).status().rounds() > 0);
			this.runner.withPropertyValues("ductor.effects.drainer.enabled=false").run((other) -> {
				assertThat(other).hasNotFailed();
				inTransaction(other.getBean(PlatformTransactionManager.class),
						() -> other.getBean(Effects.class).echo(text));
			});
			await().atMost(Duration.ofSeconds(20)).until(() -> woken.received().contains(text));
		});
	}

	/**
	 * A context whose refresh fails after Ductor's workers started leaves no thread of
	 * Ductor's behind (they are not daemon threads: one left would keep the JVM alive).
	 */
	@Test
	void aRefreshThatFailsAfterTheWorkersStartedLeavesNoDuctorThread() {
		this.runner.withUserConfiguration(FailingLateStart.class).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure()).hasRootCauseMessage("the application fails to start");
		});
		DuctorThreads threads = FailingLateStart.THREADS.get();
		assertThat(threads).isNotNull();
		assertThat(FailingLateStart.SEEN_RUNNING.get()).isNotEmpty();
		await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> assertThat(threads.liveThreads()).isEmpty());
	}

	/**
	 * docs/operations.md: Ductor uses the application's {@code JsonMapper}, "its only
	 * one, or its {@code @Primary} one". With two and no primary, Ductor must not
	 * silently store effect arguments with a third mapper of its own: start-up fails
	 * naming the choice to make, as it does for two {@code DataSource}s, or Ductor uses
	 * one of the application's.
	 */
	@Test
	void twoJsonMappersWithoutAPrimaryOneDoNotMakeDuctorUseAMapperOfItsOwn() {
		this.runner.withUserConfiguration(TwoJsonMappers.class).run((context) -> {
			if (context.getStartupFailure() != null) {
				assertThat(context.getStartupFailure()).rootCause().hasMessageContaining("JsonMapper");
				return;
			}
			JsonMapper used = context.getBean(JsonCodec.class).mapper();
			assertThat(used).isIn(context.getBean("snakeCaseMapper"), context.getBean("kebabCaseMapper"));
		});
	}

	/**
	 * docs/runs.md and docs/reconcile-and-compensate.md: when a run fails, Ductor
	 * records, in the failing transaction, the compensations of its steps. A bean of the
	 * application's told of failed runs (the run-failure handler is a replaceable bean:
	 * reference.md, "every Ductor bean is {@code @ConditionalOnMissingBean}") must not
	 * silently turn compensations off.
	 */
	@Test
	void anApplicationsRunFailureHandlerDoesNotSilenceCompensations() {
		this.runner.withBean(Compensable.class).withUserConfiguration(AlertingFailureHandler.class).run((context) -> {
			assertThat(context).hasNotFailed();
			TickService ticks = context.getBean(TickService.class);
			Compensable saga = context.getBean(Compensable.class);
			ticks.start("order", "run-c", 0);
			ticks.tick("run-c", "reserve", Integer.class, (state, tick) -> {
				saga.reserve("run-c");
				return state + 1;
			});
			await().atMost(Duration.ofSeconds(20)).until(() -> saga.calls().contains("reserve run-c"));
			ticks.tick("run-c", "ship", Integer.class, (state, tick) -> {
				tick.fail("out of stock");
				return state;
			});
			assertThat(AlertingFailureHandler.ALERTS).contains("run-c");
			assertThat(JdbcClient.create(context.getBean(DataSource.class))
				.sql("SELECT count(*) FROM eec_effect_intent WHERE effect_name = 'hostile.release'")
				.query(Long.class)
				.single()).as("the compensation recorded with the failing tick").isOne();
		});
	}

	/**
	 * A small application with its own {@code MeterRegistry} and
	 * {@code ObservationRegistry} starts without Spring's warning that a bean "is not
	 * eligible for getting processed by all BeanPostProcessors": the
	 * {@code @DurableEffect} advisor and the post-processors of Ductor's pull in no
	 * ordinary bean early.
	 */
	@Test
	void startsWithoutBeansIneligibleForPostProcessing(CapturedOutput output) {
		new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(
					org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration.class,
					org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration.class,
					org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration.class,
					org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration.class,
					DuctorAutoConfiguration.class, DuctorEffectsAutoConfiguration.class,
					DuctorIdempotencyAutoConfiguration.class, DuctorObservationAutoConfiguration.class,
					DuctorMetricsAutoConfiguration.class))
			.withPropertyValues(postgres.springProperties())
			.withUserConfiguration(EffectsConfiguration.class, Registries.class)
			.run((context) -> {
				assertThat(context).hasNotFailed();
				inTransaction(context.getBean(PlatformTransactionManager.class),
						() -> context.getBean(Effects.class).echo("advised"));
				await().atMost(Duration.ofSeconds(20))
					.until(() -> context.getBean(Effects.class).received().contains("advised"));
			});
		assertThat(output.toString()).doesNotContain("is not eligible for getting processed by all BeanPostProcessors");
	}

	/**
	 * The same with Spring Boot's own AOP, observation and metrics auto-configurations
	 * (whose post-processors collect handlers and binders, Ductor's among them) and
	 * Ductor's health and endpoint.
	 */
	@Test
	void startsWithBootsObservationAndMetricsWithoutBeansIneligibleForPostProcessing(CapturedOutput output) {
		new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(
				org.springframework.boot.autoconfigure.aop.AopAutoConfiguration.class,
				org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration.class,
				org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration.class,
				org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration.class,
				org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration.class,
				org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration.class,
				org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration.class,
				org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration.class,
				org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration.class,
				DuctorAutoConfiguration.class, DuctorEffectsAutoConfiguration.class,
				DuctorIdempotencyAutoConfiguration.class, DuctorObservationAutoConfiguration.class,
				DuctorMetricsAutoConfiguration.class,
				io.ductor.health.autoconfigure.DuctorHealthAutoConfiguration.class,
				io.ductor.actuate.autoconfigure.DuctorEndpointAutoConfiguration.class))
			.withPropertyValues(postgres.springProperties())
			.withUserConfiguration(EffectsConfiguration.class)
			.run((context) -> {
				assertThat(context).hasNotFailed();
				inTransaction(context.getBean(PlatformTransactionManager.class),
						() -> context.getBean(Effects.class).echo("advised with Boot's"));
				await().atMost(Duration.ofSeconds(20))
					.until(() -> context.getBean(Effects.class).received().contains("advised with Boot's"));
			});
		assertThat(output.toString()).doesNotContain("is not eligible for getting processed by all BeanPostProcessors");
	}

	/**
	 * docs/effects.md: the operator's {@code EffectOperations} and
	 * {@code RecurringAlarms} are each "replaced by a bean of its own type"; the effects
	 * and the drainer keep working beside an application's own. An application that
	 * guards its operator services (one that refuses every call without an operator
	 * signed in) still starts, with Boot's metrics, and its effects still run.
	 */
	@Test
	void guardedOperatorServicesLeaveStartUpAndEffectsAloneWithMetrics() {
		new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(
				org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration.class,
				org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration.class,
				org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration.class,
				org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration.class,
				org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration.class,
				org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration.class,
				org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration.class,
				DuctorAutoConfiguration.class, DuctorEffectsAutoConfiguration.class,
				DuctorMetricsAutoConfiguration.class))
			.withPropertyValues(postgres.springProperties())
			.withPropertyValues("ductor.effects.drainer.poll-interval=100ms",
					"ductor.effects.alarms.hourly.effect=echo", "ductor.effects.alarms.hourly.every=1h",
					"ductor.effects.alarms.hourly.arguments[0]=tick")
			.withUserConfiguration(EffectsConfiguration.class, GuardedOperatorServices.class)
			.run((context) -> {
				assertThat(context).hasNotFailed();
				io.micrometer.core.instrument.MeterRegistry meters = context
					.getBean(io.micrometer.core.instrument.MeterRegistry.class);
				await().atMost(Duration.ofSeconds(20))
					.until(() -> Double
						.isFinite(meters.get("ductor.alarms.next.due").tag("alarm", "hourly").gauge().value()));
				inTransaction(context.getBean(PlatformTransactionManager.class),
						() -> context.getBean(Effects.class).echo("beside guarded services"));
				await().atMost(Duration.ofSeconds(20))
					.until(() -> context.getBean(Effects.class).received().contains("beside guarded services"));
			});
	}

	private static void inTransaction(PlatformTransactionManager transactionManager, Runnable work) {
		new TransactionTemplate(transactionManager).executeWithoutResult((status) -> work.run());
	}

	static class Effects {

		private final List<String> received = new CopyOnWriteArrayList<>();

		public List<String> received() {
			return this.received;
		}

		@DurableEffect(name = "echo")
		public void echo(String text) {
			this.received.add(text);
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class EffectsConfiguration {

		@Bean
		Effects effects() {
			return new Effects();
		}

	}

	public static class Compensable {

		private final List<String> calls = new CopyOnWriteArrayList<>();

		public List<String> calls() {
			return this.calls;
		}

		@DurableEffect(name = "hostile.reserve", key = "'reserve:' + #runId", compensation = "hostile.release")
		public void reserve(String runId) {
			this.calls.add("reserve " + runId);
		}

		@DurableEffect(name = "hostile.release")
		public void release(String runId) {
			this.calls.add("release " + runId);
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class AlertingFailureHandler {

		static final List<String> ALERTS = new CopyOnWriteArrayList<>();

		@Bean
		RunFailureHandler alertOnFailedRuns() {
			return (runId) -> {
				ALERTS.add(runId);
				return 0;
			};
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class GuardedOperatorServices {

		@Bean
		io.ductor.effect.EffectOperations guardedOperations() {
			return guarded(io.ductor.effect.EffectOperations.class);
		}

		@Bean
		io.ductor.effect.RecurringAlarms guardedAlarms() {
			return guarded(io.ductor.effect.RecurringAlarms.class);
		}

		private static <T> T guarded(Class<T> type) {
			return type.cast(java.lang.reflect.Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] { type },
					(proxy, method, args) -> switch (method.getName()) {
						case "toString" -> "the application's guarded " + type.getSimpleName();
						case "hashCode" -> 0;
						case "equals" -> proxy == args[0];
						default -> throw new SecurityException("no operator signed in: " + method.getName());
					}));
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class TwoJsonMappers {

		@Bean
		JsonMapper snakeCaseMapper() {
			return JsonMapper.builder().propertyNamingStrategy(PropertyNamingStrategies.SNAKE_CASE).build();
		}

		@Bean
		JsonMapper kebabCaseMapper() {
			return JsonMapper.builder().propertyNamingStrategy(PropertyNamingStrategies.KEBAB_CASE).build();
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class Registries {

		@Bean
		SimpleMeterRegistry applicationsMeterRegistry() {
			return new SimpleMeterRegistry();
		}

		@Bean
		ObservationRegistry applicationsObservationRegistry() {
			return ObservationRegistry.create();
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class FailingLateStart {

		static final AtomicReference<DuctorThreads> THREADS = new AtomicReference<>();

		static final AtomicReference<List<Thread>> SEEN_RUNNING = new AtomicReference<>(List.of());

		@Bean
		SmartLifecycle failsToStart(DuctorThreads threads) {
			THREADS.set(threads);
			return new SmartLifecycle() {

				@Override
				public void start() {
					SEEN_RUNNING.set(threads.liveThreads());
					throw new IllegalStateException("the application fails to start");
				}

				@Override
				public void stop() {
				}

				@Override
				public boolean isRunning() {
					return false;
				}

				@Override
				public int getPhase() {
					return Integer.MAX_VALUE;
				}

			};
		}

	}

}
