package io.ductor.effect;

import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration;
import org.springframework.jdbc.core.simple.JdbcClient;

import io.ductor.autoconfigure.DuctorAutoConfiguration;
import io.ductor.autoconfigure.DuctorContextRunners;
import io.ductor.effect.autoconfigure.DuctorEffectsAutoConfiguration;
import io.ductor.test.PostgresExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Bad declarations of recurring alarms and concurrency limits fail start-up naming the
 * property (or the method), and nothing is written; good ones are declared at start-up,
 * redeclared without change, and deleted once the properties no longer name them.
 */
class RecurringAndLimitDeclarationTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	private final ApplicationContextRunner runner = DuctorContextRunners
		.onDatabase(postgres, DuctorAutoConfiguration.class, DuctorEffectsAutoConfiguration.class)
		.withPropertyValues("ductor.effects.alarm-scheduler.enabled=false", "ductor.effects.drainer.enabled=false")
		.withBean(Reminders.class);

	@Test
	void anInvalidCronFailsStartUpNamingTheProperty() {
		assertFails("ductor.effects.alarms.nightly.cron is not a valid cron expression",
				"ductor.effects.alarms.nightly.cron=0 0 25 * * *", "ductor.effects.alarms.nightly.effect=remind",
				"ductor.effects.alarms.nightly.arguments[0]=x");
	}

	@Test
	void aFiveFieldCronFailsStartUpNamingTheProperty() {
		assertFails("ductor.effects.alarms.nightly.cron is not a valid cron expression",
				"ductor.effects.alarms.nightly.cron=0 9 * * *", "ductor.effects.alarms.nightly.effect=remind");
	}

	@Test
	void bothCronAndEveryFailStartUp() {
		assertFails(
				"ductor.effects.alarms.nightly must set exactly one of ductor.effects.alarms.nightly.cron and "
						+ "ductor.effects.alarms.nightly.every but set both",
				"ductor.effects.alarms.nightly.cron=0 0 9 * * *", "ductor.effects.alarms.nightly.every=1h",
				"ductor.effects.alarms.nightly.effect=remind");
	}

	@Test
	void neitherCronNorEveryFailsStartUp() {
		assertFails("but set neither", "ductor.effects.alarms.nightly.effect=remind");
	}

	@Test
	void anUnknownZoneFailsStartUpNamingTheProperty() {
		assertFails("ductor.effects.alarms.nightly.zone is not a known time zone id",
				"ductor.effects.alarms.nightly.cron=0 0 9 * * *", "ductor.effects.alarms.nightly.zone=Mars/Olympus",
				"ductor.effects.alarms.nightly.effect=remind");
	}

	@Test
	void anUnknownEffectFailsStartUpNamingTheProperty() {
		assertFails("ductor.effects.alarms.nightly.effect names an effect that does not exist",
				"ductor.effects.alarms.nightly.every=1h", "ductor.effects.alarms.nightly.effect=nothing");
	}

	@Test
	void argumentsThatDoNotFitTheEffectFailStartUpNamingTheProperty() {
		assertFails("ductor.effects.alarms.nightly.arguments: effect 'remind' takes 2 argument(s) but 1 are given",
				"ductor.effects.alarms.nightly.every=1h", "ductor.effects.alarms.nightly.effect=remind",
				"ductor.effects.alarms.nightly.arguments[0]=x");
		assertFails("ductor.effects.alarms.nightly.arguments: argument 1 ('many') is not JSON of type int",
				"ductor.effects.alarms.nightly.every=1h", "ductor.effects.alarms.nightly.effect=remind",
				"ductor.effects.alarms.nightly.arguments[0]=x", "ductor.effects.alarms.nightly.arguments[1]=many");
	}

	@Test
	void aZeroOrNegativeConcurrencyOverrideFailsStartUpNamingTheProperty() {
		assertFails("ductor.effects.overrides.remind.max-concurrency must be between 1 and 10000 but was 0",
				"ductor.effects.overrides.remind.max-concurrency=0");
		assertFails("ductor.effects.overrides.remind.max-concurrency must be between 1 and 10000 but was -3",
				"ductor.effects.overrides.remind.max-concurrency=-3");
	}

	@Test
	void aConcurrencyOverrideOfAnUnknownEffectFailsStartUpNamingTheProperty() {
		assertFails("ductor.effects.overrides.nothing.max-concurrency names an effect that does not exist",
				"ductor.effects.overrides.nothing.max-concurrency=2");
	}

	@Test
	void aNegativeAnnotatedConcurrencyFailsStartUpNamingTheMethod() {
		new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class,
					DataSourceTransactionManagerAutoConfiguration.class, TransactionAutoConfiguration.class,
					JacksonAutoConfiguration.class, DuctorAutoConfiguration.class,
					DuctorEffectsAutoConfiguration.class))
			.withPropertyValues(postgres.springProperties())
			.withPropertyValues("ductor.effects.drainer.enabled=false")
			.withBean(NegativeLimit.class)
			.run((context) -> {
				assertThat(context).hasFailed();
				assertThat(messages(context)).contains("@DurableEffect 'negative'")
					.contains("maxConcurrency must not be negative but was -1");
			});
	}

	@Test
	void anOverrideWinsOverTheAnnotatedLimit() {
		this.runner.withPropertyValues("ductor.effects.overrides.limited.max-concurrency=2").run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(context.getBean(EffectOperations.class).concurrency())
				.containsExactly(new EffectConcurrency("limited", 2, 0));
			assertThat(jdbc().sql("SELECT count(*) FROM eec_effect_slot WHERE effect_name = 'limited'")
				.query(Long.class)
				.single()).isEqualTo(2);
		});
	}

	@Test
	void alarmsDeclaredInPropertiesAreUpsertedAndDeletedWhenNoLongerDeclared() {
		String[] nightly = { "ductor.effects.alarms.nightly.cron=0 0 2 * * *",
				"ductor.effects.alarms.nightly.zone=Europe/Berlin", "ductor.effects.alarms.nightly.effect=remind",
				"ductor.effects.alarms.nightly.arguments[0]=ops", "ductor.effects.alarms.nightly.arguments[1]=3",
				"ductor.effects.alarms.nightly.missed=run-each" };
		this.runner.withPropertyValues(nightly).run((context) -> {
			assertThat(context).hasNotFailed();
			RecurringAlarm alarm = context.getBean(RecurringAlarms.class).recurringAlarms().get(0);
			assertThat(alarm.name()).isEqualTo("nightly");
			assertThat(alarm.schedule().missed()).isEqualTo(MissedOccurrences.RUN_EACH);
			assertThat(alarm.declaredIn()).isEqualTo("properties");
			assertThat(alarm.nextAt().atZoneSameInstant(java.time.ZoneId.of("Europe/Berlin")).getHour()).isEqualTo(2);
		});
		String updated = jdbc().sql("SELECT updated_at::text FROM eec_recurring_alarm WHERE name = 'nightly'")
			.query(String.class)
			.single();
		// a restart with the same declaration changes nothing
		this.runner.withPropertyValues(nightly).run((context) -> assertThat(context).hasNotFailed());
		assertThat(jdbc().sql("SELECT updated_at::text FROM eec_recurring_alarm WHERE name = 'nightly'")
			.query(String.class)
			.single()).isEqualTo(updated);
		// a changed schedule takes effect at the next start
		this.runner.withPropertyValues(nightly)
			.withPropertyValues("ductor.effects.alarms.nightly.cron=0 30 3 * * *")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				RecurringAlarm alarm = context.getBean(RecurringAlarms.class).recurringAlarms().get(0);
				assertThat(alarm.nextAt().atZoneSameInstant(java.time.ZoneId.of("Europe/Berlin")).getMinute())
					.isEqualTo(30);
				assertThat(alarm.schedule().cronExpression()).isEqualTo("0 30 3 * * *");
			});
		// no longer declared: deleted
		this.runner.run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(context.getBean(RecurringAlarms.class).recurringAlarms()).isEmpty();
		});
	}

	private void assertFails(String expected, String... properties) {
		this.runner.withPropertyValues(properties).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(messages(context)).contains(expected);
		});
		assertThat(jdbc().sql("SELECT count(*) FROM eec_recurring_alarm").query(Long.class).single()).isZero();
	}

	private static JdbcClient jdbc() {
		return JdbcClient.create(postgres.dataSource());
	}

	private static String messages(AssertableApplicationContext context) {
		StringBuilder messages = new StringBuilder();
		for (Throwable ex = context.getStartupFailure(); ex != null; ex = ex.getCause()) {
			messages.append(ex.getMessage()).append('\n');
		}
		return messages.toString();
	}

	public static class Reminders {

		@DurableEffect(name = "remind")
		public void remind(String team, int times) {
		}

		@DurableEffect(name = "limited", maxConcurrency = 5)
		public void limited(String id) {
		}

	}

	public static class NegativeLimit {

		@DurableEffect(name = "negative", maxConcurrency = -1)
		public void call(String id) {
		}

	}

}
