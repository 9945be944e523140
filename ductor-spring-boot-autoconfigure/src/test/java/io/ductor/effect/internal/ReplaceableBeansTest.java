package io.ductor.effect.internal;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import javax.sql.DataSource;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import tools.jackson.databind.PropertyNamingStrategies;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import io.ductor.autoconfigure.DuctorAutoConfiguration;
import io.ductor.autoconfigure.DuctorContextRunners;
import io.ductor.effect.DurableEffect;
import io.ductor.effect.EffectOperations;
import io.ductor.effect.EffectOutbox;
import io.ductor.effect.RecurringAlarms;
import io.ductor.effect.autoconfigure.DuctorEffectsAutoConfiguration;
import io.ductor.json.internal.JsonCodec;
import io.ductor.observation.internal.DuctorInstrumentation;
import io.ductor.observation.internal.DuctorObservations;
import io.ductor.run.TickService;
import io.ductor.run.internal.RunFailureHandler;
import io.ductor.test.PostgresExtension;
import io.ductor.worker.internal.DuctorThreads;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A bean of the application's replaces Ductor's of the same type, and the rest of Ductor
 * then uses it on the hot path (not merely has it in the context): effects recorded,
 * dispatched, and runs failed, against PostgreSQL.
 */
class ReplaceableBeansTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	private final ApplicationContextRunner runner = DuctorContextRunners
		.onDatabase(postgres, DuctorAutoConfiguration.class, DuctorEffectsAutoConfiguration.class)
		.withPropertyValues("ductor.effects.drainer.poll-interval=100ms")
		.withUserConfiguration(EffectsConfiguration.class);

	@Test
	void theApplicationsEffectPayloadsEncodesWhatIsRecordedAndDecodesWhatRuns() {
		this.runner.withUserConfiguration(UserPayloads.class).run((context) -> {
			assertThat(context).hasNotFailed();
			CountingPayloads payloads = context.getBean(CountingPayloads.class);
			assertThat(context.getBean(EffectPayloads.class)).isSameAs(payloads);
			inTransaction(context.getBean(PlatformTransactionManager.class),
					() -> context.getBean(Effects.class).echo("through the application's codec"));
			Effects effects = context.getBean(Effects.class);
			await().atMost(Duration.ofSeconds(20))
				.until(() -> effects.received().contains("through the application's codec"));
			assertThat(payloads.encoded).hasPositiveValue();
			assertThat(payloads.read).hasPositiveValue();
		});
	}

	@Test
	void theApplicationsJsonMapperWritesTheStoredArguments() {
		this.runner.withUserConfiguration(SnakeCaseMapper.class).run((context) -> {
			assertThat(context).hasNotFailed();
			Effects effects = context.getBean(Effects.class);
			inTransaction(context.getBean(PlatformTransactionManager.class),
					() -> effects.parcel(new Parcel("SKU-1", 2)));
			String stored = JdbcClient.create(context.getBean(DataSource.class))
				.sql("SELECT payload::text FROM eec_effect_intent WHERE effect_name = 'parcel'")
				.query(String.class)
				.single();
			assertThat(stored).contains("\"stock_unit\"").doesNotContain("stockUnit");
			await().atMost(Duration.ofSeconds(20)).until(() -> effects.received().contains("SKU-1x2"));
		});
	}

	@Test
	void theApplicationsDuctorThreadsRunTheDrainer() {
		this.runner.withUserConfiguration(UserThreads.class).run((context) -> {
			assertThat(context).hasNotFailed();
			DuctorThreads threads = context.getBean(DuctorThreads.class);
			assertThat(threads).isSameAs(UserThreads.THREADS);
			Effects effects = context.getBean(Effects.class);
			inTransaction(context.getBean(PlatformTransactionManager.class), () -> effects.echo("on whose thread"));
			await().atMost(Duration.ofSeconds(20)).until(() -> effects.received().contains("on whose thread"));
			assertThat(UserThreads.THREADS.liveThreads()).contains(effects.threads().get(0));
		});
	}

	@Test
	void theApplicationsDuctorInstrumentationIsToldOfRecordingsDispatchesAndTicks() {
		this.runner.withUserConfiguration(UserInstrumentation.class).run((context) -> {
			assertThat(context).hasNotFailed();
			Effects effects = context.getBean(Effects.class);
			inTransaction(context.getBean(PlatformTransactionManager.class), () -> effects.echo("counted"));
			await().atMost(Duration.ofSeconds(20)).until(() -> effects.received().contains("counted"));
			context.getBean(TickService.class).start("order", "run-2", Map.of("step", 0));
			context.getBean(TickService.class).tick("run-2", "next", Map.class, (state, tick) -> state);
			await().atMost(Duration.ofSeconds(20))
				.untilAsserted(() -> assertThat(UserInstrumentation.CALLS).contains("scheduled echo", "dispatched echo",
						"tick applied", "observed tick run-2"));
		});
	}

	@Test
	void theApplicationsRunFailureHandlerIsToldOfAFailedRun() {
		this.runner.withUserConfiguration(UserFailureHandler.class).run((context) -> {
			assertThat(context).hasNotFailed();
			TickService ticks = context.getBean(TickService.class);
			ticks.start("order", "run-1", Map.of("step", 0));
			ticks.tick("run-1", "fail", Map.class, (state, tick) -> {
				tick.fail("out of stock");
				return state;
			});
			assertThat(UserFailureHandler.FAILED).containsExactly("run-1");
		});
	}

	@Test
	void withTheApplicationsOwnServicesDurableEffectsAndConfiguredAlarmsKeepWorking() {
		this.runner.withUserConfiguration(UserServices.class)
			.withPropertyValues("ductor.effects.alarms.hourly.effect=echo", "ductor.effects.alarms.hourly.every=1h",
					"ductor.effects.alarms.hourly.arguments[0]=tick")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(context.getBean(EffectOutbox.class)).isSameAs(UserServices.OUTBOX);
				assertThat(context.getBean(EffectOperations.class)).isSameAs(UserServices.OPERATIONS);
				assertThat(context.getBean(RecurringAlarms.class)).isSameAs(UserServices.ALARMS);
				Effects effects = context.getBean(Effects.class);
				inTransaction(context.getBean(PlatformTransactionManager.class), () -> effects.echo("still durable"));
				await().atMost(Duration.ofSeconds(20)).until(() -> effects.received().contains("still durable"));
				assertThat(JdbcClient.create(context.getBean(DataSource.class))
					.sql("SELECT count(*) FROM eec_recurring_alarm WHERE name = 'hourly'")
					.query(Long.class)
					.single()).isOne();
			});
	}

	private static void inTransaction(PlatformTransactionManager transactionManager, Runnable work) {
		new TransactionTemplate(transactionManager).executeWithoutResult((status) -> work.run());
	}

	record Parcel(String stockUnit, int quantity) {
	}

	static class Effects {

		private final List<String> received = new CopyOnWriteArrayList<>();

		private final List<Thread> threads = new CopyOnWriteArrayList<>();

		public List<String> received() {
			return this.received;
		}

		public List<Thread> threads() {
			return this.threads;
		}

		@DurableEffect(name = "echo")
		public void echo(String text) {
			this.threads.add(Thread.currentThread());
			this.received.add(text);
		}

		@DurableEffect(name = "parcel")
		public void parcel(Parcel parcel) {
			this.received.add(parcel.stockUnit() + "x" + parcel.quantity());
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class EffectsConfiguration {

		@Bean
		Effects effects() {
			return new Effects();
		}

	}

	static class CountingPayloads extends EffectPayloads {

		final AtomicInteger encoded = new AtomicInteger();

		final AtomicInteger read = new AtomicInteger();

		CountingPayloads(JsonMapper mapper) {
			super(mapper, 1 << 20);
		}

		@Override
		Payload encode(EffectDefinition effect, Object[] args) {
			this.encoded.incrementAndGet();
			return super.encode(effect, args);
		}

		@Override
		Object[] read(EffectDefinition effect, String json) {
			this.read.incrementAndGet();
			return super.read(effect, json);
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class UserPayloads {

		@Bean
		CountingPayloads userPayloads(JsonCodec json) {
			return new CountingPayloads(json.mapper());
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class SnakeCaseMapper {

		@Bean
		JsonMapper userJsonMapper() {
			return JsonMapper.builder()
				.findAndAddModules()
				.propertyNamingStrategy(PropertyNamingStrategies.SNAKE_CASE)
				.build();
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class UserThreads {

		static final DuctorThreads THREADS = new DuctorThreads(false, Duration.ofSeconds(5));

		@Bean
		DuctorThreads userThreads() {
			return THREADS;
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class UserInstrumentation {

		static final List<String> CALLS = new CopyOnWriteArrayList<>();

		@Bean
		DuctorInstrumentation userInstrumentation() {
			return DuctorInstrumentation.of(new io.ductor.metrics.internal.DuctorObserver() {

				@Override
				public void effectScheduled(String effect) {
					CALLS.add("scheduled " + effect);
				}

				@Override
				public void effectDispatched(String effect, String outcome, long nanos) {
					CALLS.add("dispatched " + effect);
				}

				@Override
				public void tick(String outcome, int attempts) {
					CALLS.add("tick " + outcome);
				}

			}, new DuctorObservations() {

				@Override
				public Scope tick(String runId) {
					CALLS.add("observed tick " + runId);
					return Scope.NOOP;
				}

			});
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class UserFailureHandler {

		static final List<String> FAILED = new CopyOnWriteArrayList<>();

		static final RunFailureHandler HANDLER = (runId) -> {
			FAILED.add(runId);
			return 0;
		};

		@Bean
		RunFailureHandler userFailureHandler() {
			return HANDLER;
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class UserServices {

		static final EffectOutbox OUTBOX = refusing(EffectOutbox.class);

		static final EffectOperations OPERATIONS = refusing(EffectOperations.class);

		static final RecurringAlarms ALARMS = refusing(RecurringAlarms.class);

		@Bean
		EffectOutbox userOutbox() {
			return OUTBOX;
		}

		@Bean
		EffectOperations userOperations() {
			return OPERATIONS;
		}

		@Bean
		RecurringAlarms userAlarms() {
			return ALARMS;
		}

		private static <T> T refusing(Class<T> type) {
			return type.cast(java.lang.reflect.Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] { type },
					(proxy, method, args) -> switch (method.getName()) {
						case "toString" -> "the application's " + type.getSimpleName();
						case "hashCode" -> 0;
						case "equals" -> proxy == args[0];
						default -> throw new UnsupportedOperationException(method.getName());
					}));
		}

	}

}
