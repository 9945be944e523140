package io.ductor.effect;

import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.zone.ZoneOffsetTransition;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import io.ductor.effect.internal.DurableEffects;
import io.ductor.test.PostgresExtension;
import io.ductor.test.TestDatabase;
import io.ductor.test.TestDatabases;
import io.ductor.worker.internal.WorkerTask;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.awaitility.Awaitility.await;

/**
 * Recurring alarms on real PostgreSQL: one intent per occurrence across instances that
 * restart, the missed-occurrence policies, daylight-saving changes, and the outbox's
 * schedule, reschedule, pause, resume and cancel in the caller's transaction.
 */
@ExtendWith(OutputCaptureExtension.class)
class RecurringAlarmTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	private static final String[] QUIET = { "ductor.effects.drainer.enabled=false",
			"ductor.effects.alarm-scheduler.enabled=false", "ductor.effects.reconciler.interval=1h",
			"ductor.retention.interval=1h" };

	@AfterEach
	void forgetAlarmsAndIntents() {
		JdbcClient jdbc = JdbcClient.create(postgres.dataSource());
		jdbc.sql("DELETE FROM eec_recurring_alarm").update();
		jdbc.sql("DELETE FROM eec_effect_intent").update();
	}

	@Test
	void aOneSecondAlarmOnThreeRestartingInstancesRecordsAndRunsEveryOccurrenceOnce() throws Exception {
		Beeps.reset();
		TestDatabase database = TestDatabases.create();
		String[] instance = { "ductor.effects.alarms.beep.every=1s", "ductor.effects.alarms.beep.effect=beep",
				"ductor.effects.alarm-scheduler.interval=200ms", "ductor.effects.drainer.poll-interval=200ms",
				"ductor.effects.reconciler.interval=1h", "ductor.retention.interval=1h" };
		List<ConfigurableApplicationContext> instances = new ArrayList<>();
		try {
			for (int i = 0; i < 3; i++) {
				instances.add(EffectInstances.start(database, Beeps.Config.class, instance));
			}
			// the third instance stays up throughout: it watches the occurrences
			JdbcClient watch = JdbcClient.create(instances.get(2).getBean(javax.sql.DataSource.class));
			awaitMoreOccurrences(watch, 3);
			// a rolling restart of two of the three, one after the other, while the alarm
			// fires
			for (int i = 0; i < 2; i++) {
				instances.get(i).close();
				awaitMoreOccurrences(watch, 1);
				instances.set(i, EffectInstances.start(database, Beeps.Config.class, instance));
				awaitMoreOccurrences(watch, 1);
			}
			awaitMoreOccurrences(watch, 1);
			// stop the alarm, then let the instances run what it recorded last before
			// they stop
			ConfigurableApplicationContext any = instances.get(2);
			new TransactionTemplate(any.getBean(PlatformTransactionManager.class))
				.executeWithoutResult((status) -> any.getBean(RecurringAlarms.class).pauseRecurring("beep"));
			JdbcClient live = JdbcClient.create(any.getBean(javax.sql.DataSource.class));
			await().atMost(Duration.ofSeconds(15))
				.until(() -> live
					.sql("SELECT count(*) FROM eec_effect_intent WHERE idempotency_key LIKE 'alarm:beep@%' "
							+ "AND status <> 'completed'")
					.query(Long.class)
					.single() == 0);
		}
		finally {
			instances.forEach(ConfigurableApplicationContext::close);
		}
		JdbcClient jdbc = JdbcClient.create(database.newDataSource(1));
		try {
			List<String> keys = jdbc
				.sql("SELECT idempotency_key FROM eec_effect_intent WHERE idempotency_key LIKE "
						+ "'alarm:beep@%' ORDER BY idempotency_key")
				.query(String.class)
				.list();
			List<Instant> instants = keys.stream()
				.map((key) -> Instant.parse(key.substring("alarm:beep@".length())))
				.toList();
			assertThat(instants).hasSizeGreaterThanOrEqualTo(8);
			// consecutive whole seconds from the first to the last: none lost
			for (int i = 1; i < instants.size(); i++) {
				assertThat(instants.get(i)).isEqualTo(instants.get(i - 1).plusSeconds(1));
			}
			Instant last = instants.get(instants.size() - 1);
			assertThat(jdbc.sql("SELECT last_occurrence_at FROM eec_recurring_alarm WHERE name = 'beep'")
				.query(java.time.OffsetDateTime.class)
				.single()
				.toInstant()).isEqualTo(last);
			// each ran, once per key (graceful restarts: no attempt was interrupted)
			assertThat(jdbc
				.sql("SELECT count(*) FROM eec_effect_intent WHERE idempotency_key LIKE 'alarm:beep@%' "
						+ "AND status <> 'completed'")
				.query(Long.class)
				.single()).isZero();
			assertThat(Beeps.calls.keySet()).containsExactlyInAnyOrderElementsOf(keys);
			assertThat(Beeps.calls.values()).allSatisfy((count) -> assertThat(count.get()).isEqualTo(1));
		}
		finally {
			TestDatabases.drop(database);
		}
	}

	@Test
	void afterAnOutageRunEachRecordsEveryMissedOccurrenceSkipNoneAndRunOnceOne() throws Exception {
		Beeps.reset();
		try (ConfigurableApplicationContext context = EffectInstances.start(postgres.database(), Beeps.Config.class,
				QUIET)) {
			RecurringAlarms alarms = context.getBean(RecurringAlarms.class);
			TransactionTemplate tx = tx(context);
			AlarmSchedule everySecond = AlarmSchedule.every(Duration.ofSeconds(1)).withGrace(Duration.ofSeconds(2));
			tx.executeWithoutResult((status) -> {
				alarms.scheduleRecurring("each", everySecond.withMissed(MissedOccurrences.RUN_EACH),
						EffectRequest.of("beep"));
				alarms.scheduleRecurring("skip", everySecond.withMissed(MissedOccurrences.SKIP),
						EffectRequest.of("beep"));
				alarms.scheduleRecurring("once", everySecond, EffectRequest.of("beep"));
			});
			JdbcClient jdbc = JdbcClient.create(postgres.dataSource());
			// every instance was down for ten seconds: the alarms' next occurrence is ten
			// seconds old
			jdbc.sql("UPDATE eec_recurring_alarm SET next_at = date_trunc('second', now()) - interval '10 seconds' "
					+ "WHERE name IN ('each', 'skip', 'once')")
				.update();
			Instant start = jdbc.sql("SELECT next_at FROM eec_recurring_alarm WHERE name = 'each'")
				.query(java.time.OffsetDateTime.class)
				.single()
				.toInstant();
			WorkerTask round = context.getBean(DurableEffects.class).alarmScheduler(100);
			assertThat(round.runOnce()).isFalse();

			List<Instant> each = occurrences(jdbc, "each");
			List<Instant> skip = occurrences(jdbc, "skip");
			List<Instant> once = occurrences(jdbc, "once");
			// run each: all of them, the ten missed and the one or two on time, in order
			assertThat(each).hasSizeBetween(11, 12);
			assertThat(each.get(0)).isEqualTo(start);
			for (int i = 1; i < each.size(); i++) {
				assertThat(each.get(i)).isEqualTo(each.get(i - 1).plusSeconds(1));
			}
			Instant onTimeFrom = each.get(each.size() - 1).minusSeconds(2);
			// skip: only those within the grace of two seconds
			assertThat(skip).isNotEmpty().allSatisfy((instant) -> assertThat(instant).isAfterOrEqualTo(onTimeFrom));
			assertThat(skip).hasSizeLessThanOrEqualTo(3);
			// run once: the first missed one stands for all of them, then those on time
			assertThat(once.get(0)).isEqualTo(start);
			assertThat(once.subList(1, once.size()))
				.allSatisfy((instant) -> assertThat(instant).isAfterOrEqualTo(onTimeFrom));
			// every alarm goes on after now, and a second round records nothing more
			int recorded = count(jdbc);
			round.runOnce();
			assertThat(count(jdbc)).isBetween(recorded, recorded + 3);
		}
	}

	@Test
	void aCronInAZoneSkipsTheHourTheClocksSkipAndFiresTwiceInTheHourTheyRepeat() throws Exception {
		Beeps.reset();
		ZoneId berlin = ZoneId.of("Europe/Berlin");
		try (ConfigurableApplicationContext context = EffectInstances.start(postgres.database(), Beeps.Config.class,
				QUIET)) {
			RecurringAlarms alarms = context.getBean(RecurringAlarms.class);
			tx(context).executeWithoutResult((status) -> alarms.scheduleRecurring("dst",
					AlarmSchedule.cron("0 30 2 * * *", berlin).withMissed(MissedOccurrences.RUN_EACH),
					EffectRequest.of("beep")));
			JdbcClient jdbc = JdbcClient.create(postgres.dataSource());
			// the last spring-forward and fall-back before now, whatever the date of the
			// run
			Instant now = Instant.now();
			ZoneOffsetTransition fallBack = berlin.getRules().previousTransition(now);
			while (!fallBack.isOverlap()) {
				fallBack = berlin.getRules().previousTransition(fallBack.getInstant());
			}
			ZoneOffsetTransition springForward = berlin.getRules().previousTransition(fallBack.getInstant());
			assertThat(springForward.isGap()).isTrue();
			// the scheduler was away since two days before the spring-forward: every
			// occurrence since is due
			Instant from = springForward.getInstant().minus(Duration.ofDays(2));
			Instant first = AlarmSchedule.cron("0 30 2 * * *", berlin).next(from);
			jdbc.sql("UPDATE eec_recurring_alarm SET next_at = ? WHERE name = 'dst'")
				.param(first.atOffset(java.time.ZoneOffset.UTC))
				.update();
			WorkerTask round = context.getBean(DurableEffects.class).alarmScheduler(100);
			while (round.runOnce()) {
				// a round records at most a thousand occurrences of one alarm
			}
			List<Instant> occurrences = occurrences(jdbc, "dst");
			java.time.LocalDate gapDay = springForward.getDateTimeBefore().toLocalDate();
			java.time.LocalDate overlapDay = fallBack.getDateTimeBefore().toLocalDate();
			// no 02:30 on the day the clocks go from 02:00 to 03:00
			assertThat(occurrences).noneMatch((instant) -> instant.atZone(berlin).toLocalDate().equals(gapDay));
			assertThat(occurrences).contains(gapDay.minusDays(1).atTime(2, 30).atZone(berlin).toInstant(),
					gapDay.plusDays(1).atTime(2, 30).atZone(berlin).toInstant());
			// two on the day 02:00-03:00 happens twice: 02:30 summer time and 02:30
			// winter time, one hour apart
			List<Instant> onOverlapDay = occurrences.stream()
				.filter((instant) -> instant.atZone(berlin).toLocalDate().equals(overlapDay))
				.toList();
			assertThat(onOverlapDay).hasSize(2);
			assertThat(Duration.between(onOverlapDay.get(0), onOverlapDay.get(1))).isEqualTo(Duration.ofHours(1));
			assertThat(onOverlapDay).allSatisfy((instant) -> assertThat(instant.atZone(berlin).toLocalTime())
				.isEqualTo(java.time.LocalTime.of(2, 30)));
			// every other day once: one missing on the gap day, one more on the overlap
			// day
			long days = java.time.temporal.ChronoUnit.DAYS.between(first.atZone(berlin).toLocalDate(),
					occurrences.get(occurrences.size() - 1).atZone(berlin).toLocalDate()) + 1;
			assertThat(occurrences).hasSize((int) days);
		}
	}

	@Test
	void theOutboxSchedulesReschedulesPausesResumesAndCancelsInTheCallersTransaction() throws Exception {
		Beeps.reset();
		try (ConfigurableApplicationContext context = EffectInstances.start(postgres.database(), Beeps.Config.class,
				QUIET)) {
			RecurringAlarms alarms = context.getBean(RecurringAlarms.class);
			TransactionTemplate tx = tx(context);
			JdbcClient jdbc = JdbcClient.create(postgres.dataSource());
			// rolled back: nothing declared
			tx.executeWithoutResult((status) -> {
				alarms.scheduleRecurring("api", AlarmSchedule.every(Duration.ofHours(1)), EffectRequest.of("beep"));
				status.setRollbackOnly();
			});
			assertThat(alarms.recurringAlarms()).isEmpty();
			assertThatIllegalArgumentException()
				.isThrownBy(() -> tx.executeWithoutResult((status) -> alarms.scheduleRecurring("api",
						AlarmSchedule.every(Duration.ofHours(1)), EffectRequest.of("beep").withKey("k"))));
			assertThat(assertThatThrows(() -> alarms.scheduleRecurring("api", AlarmSchedule.every(Duration.ofHours(1)),
					EffectRequest.of("beep"))))
				.contains("outside a transaction");

			Instant hourly = tx.execute((status) -> alarms.scheduleRecurring("api",
					AlarmSchedule.every(Duration.ofHours(1)), EffectRequest.of("beep")));
			assertThat(hourly.getEpochSecond() % 3600).isZero();
			// the same schedule again keeps its next occurrence; another one starts after
			// now
			Instant again = tx.execute((status) -> alarms.scheduleRecurring("api",
					AlarmSchedule.every(Duration.ofHours(1)), EffectRequest.of("beep")));
			assertThat(again).isEqualTo(hourly);
			Instant minutely = tx.execute((status) -> alarms.scheduleRecurring("api",
					AlarmSchedule.every(Duration.ofMinutes(1)), EffectRequest.of("beep")));
			// the first whole minute after now (the top of the hour, when it is a minute
			// away)
			assertThat(minutely.getEpochSecond() % 60).isZero();
			assertThat(minutely).isBeforeOrEqualTo(hourly).isAfter(Instant.now().minusSeconds(5));
			assertThat(alarms.recurringAlarms()).singleElement().satisfies((alarm) -> {
				assertThat(alarm.declaredIn()).isEqualTo("api");
				assertThat(alarm.schedule().period()).isEqualTo(Duration.ofMinutes(1));
				assertThat(alarm.nextAt().toInstant()).isEqualTo(minutely);
			});

			// paused: due, but nothing is recorded
			assertThat(inTx(tx, () -> alarms.pauseRecurring("api"))).isTrue();
			jdbc.sql("UPDATE eec_recurring_alarm SET next_at = now() - interval '1 minute' WHERE name = 'api'")
				.update();
			WorkerTask round = context.getBean(DurableEffects.class).alarmScheduler(100);
			round.runOnce();
			assertThat(occurrences(jdbc, "api")).isEmpty();
			// resumed: the pause is not made up, the next occurrence is after now
			assertThat(inTx(tx, () -> alarms.resumeRecurring("api"))).isTrue();
			round.runOnce();
			assertThat(occurrences(jdbc, "api")).isEmpty();
			assertThat(alarms.recurringAlarms().get(0).nextAt().toInstant()).isAfter(Instant.now().minusSeconds(5));

			// due now: one occurrence, dispatched like any intent, with the alarm's last
			// key
			jdbc.sql("UPDATE eec_recurring_alarm SET next_at = date_trunc('minute', now()) WHERE name = 'api'")
				.update();
			round.runOnce();
			assertThat(occurrences(jdbc, "api")).hasSize(1);
			RecurringAlarm alarm = alarms.recurringAlarms().get(0);
			assertThat(alarm.lastKey()).isEqualTo(RecurringAlarm.occurrenceKey("api", occurrences(jdbc, "api").get(0)));
			assertThat(alarm.lastStatus()).isEqualTo(EffectStatus.PENDING);

			// cancelled: gone, its recorded occurrence stays
			assertThat(inTx(tx, () -> alarms.cancelRecurring("api"))).isTrue();
			assertThat(alarms.recurringAlarms()).isEmpty();
			assertThat(inTx(tx, () -> alarms.cancelRecurring("api"))).isFalse();
			assertThat(occurrences(jdbc, "api")).hasSize(1);
		}
	}

	private static boolean inTx(TransactionTemplate tx, java.util.function.BooleanSupplier work) {
		return Boolean.TRUE.equals(tx.execute((status) -> work.getAsBoolean()));
	}

	private static String assertThatThrows(Runnable call) {
		try {
			call.run();
		}
		catch (RuntimeException ex) {
			return ex.getMessage();
		}
		throw new AssertionError("expected a failure");
	}

	/**
	 * An instance whose database clock stands forty days after the declaration of a
	 * one-second run-each alarm (every instance was down that long) records the newest
	 * thousand missed occurrences and those on time, not three and a half million, and
	 * warns how many it skipped.
	 */
	@Test
	void afterAFortyDayOutageRunEachRecordsTheNewestThousandMissedOccurrencesAndWarns(CapturedOutput output)
			throws Exception {
		Instant next;
		try (ConfigurableApplicationContext before = EffectInstances.start(postgres.database(), Beeps.Config.class,
				QUIET)) {
			RecurringAlarms alarms = before.getBean(RecurringAlarms.class);
			next = tx(before).execute((status) -> {
				alarms.scheduleRecurring("each",
						AlarmSchedule.every(Duration.ofSeconds(1))
							.withMissed(MissedOccurrences.RUN_EACH)
							.withGrace(Duration.ofSeconds(2)),
						EffectRequest.of("beep"));
				return alarms.recurringAlarms().get(0).nextAt().toInstant();
			});
		}
		Instant fortyDaysLater = next.plus(Duration.ofDays(40)).plusMillis(500);
		String[] later = java.util.stream.Stream.concat(java.util.Arrays.stream(QUIET),
				java.util.stream.Stream.of("spring.datasource.hikari.connection-init-sql=SELECT set_config("
						+ "'ductor.clock', '" + fortyDaysLater + "', false)"))
			.toArray(String[]::new);
		try (ConfigurableApplicationContext context = EffectInstances.start(postgres.database(), Beeps.Config.class,
				later)) {
			JdbcClient jdbc = JdbcClient.create(context.getBean(javax.sql.DataSource.class));
			assertThat(jdbc.sql("SELECT ductor_now()").query(java.time.OffsetDateTime.class).single().toInstant())
				.isEqualTo(fortyDaysLater);
			WorkerTask round = context.getBean(DurableEffects.class).alarmScheduler(100);
			int rounds = 1;
			while (round.runOnce() && rounds < 10) {
				rounds++;
			}
			assertThat(rounds).as("rounds until nothing more is due").isLessThanOrEqualTo(2);

			List<Instant> each = occurrences(jdbc, "each");
			// the newest thousand missed (more than two seconds late), then the two on
			// time, one second apart
			Instant lastOnTime = fortyDaysLater.minusMillis(500);
			assertThat(each).hasSize(1002);
			assertThat(each.get(each.size() - 1)).isEqualTo(lastOnTime);
			for (int i = 1; i < each.size(); i++) {
				assertThat(each.get(i)).isEqualTo(each.get(i - 1).plusSeconds(1));
			}
			long skipped = Duration.between(next, each.get(0)).toSeconds();
			assertThat(skipped).isEqualTo(40 * 86_400 - 1001);
			assertThat(output).contains("recurring alarm 'each'")
				.contains("records the newest 1,000 of them")
				.contains("skips the " + String.format(java.util.Locale.ROOT, "%,d", skipped) + " before them");
		}
	}

	@Test
	void aPausedAlarmFromPropertiesStaysPausedAcrossARestartAndStartUpSaysSo(CapturedOutput output) {
		String[] declared = java.util.stream.Stream.concat(java.util.Arrays.stream(QUIET),
				java.util.stream.Stream.of("ductor.effects.alarms.billing.renewals.every=30s",
						"ductor.effects.alarms.billing.renewals.effect=beep"))
			.toArray(String[]::new);
		try (ConfigurableApplicationContext first = EffectInstances.start(postgres.database(), Beeps.Config.class,
				declared)) {
			assertThat(output).contains("Ductor's recurring alarm 'billing.renewals' (every PT30S")
				.contains("next fires at");
			Boolean paused = tx(first).execute((status) -> first.getBean(RecurringAlarms.class)
				.pauseRecurring("billing.renewals", new OperatorDecision("quiet month", "ops")));
			assertThat(paused).isTrue();
		}
		int before = output.length();
		try (ConfigurableApplicationContext restarted = EffectInstances.start(postgres.database(), Beeps.Config.class,
				declared)) {
			String startUp = output.toString().substring(before);
			assertThat(startUp).contains("Ductor's recurring alarm 'billing.renewals' (every PT30S")
				.contains("is paused")
				.doesNotContain("next fires at");
			assertThat(restarted.getBean(RecurringAlarms.class).recurringAlarms()).singleElement()
				.satisfies((alarm) -> assertThat(alarm.paused()).isTrue());
		}
	}

	private static List<Instant> occurrences(JdbcClient jdbc, String alarm) {
		String prefix = "alarm:" + alarm + "@";
		return jdbc.sql("SELECT idempotency_key FROM eec_effect_intent WHERE idempotency_key LIKE ? ORDER BY id")
			.param(prefix + "%")
			.query(String.class)
			.list()
			.stream()
			.map((key) -> Instant.parse(key.substring(prefix.length())))
			.toList();
	}

	private static int count(JdbcClient jdbc) {
		return jdbc.sql("SELECT count(*) FROM eec_effect_intent").query(Integer.class).single();
	}

	/**
	 * Waits until {@code more} occurrences of the alarm beyond those completed now have
	 * completed.
	 */
	private static void awaitMoreOccurrences(JdbcClient jdbc, int more) {
		String count = "SELECT count(*) FROM eec_effect_intent WHERE idempotency_key LIKE 'alarm:beep@%' "
				+ "AND status = 'completed'";
		long now = jdbc.sql(count).query(Long.class).single();
		await().atMost(Duration.ofSeconds(20)).until(() -> jdbc.sql(count).query(Long.class).single() >= now + more);
	}

	private static TransactionTemplate tx(ConfigurableApplicationContext context) {
		return new TransactionTemplate(context.getBean(PlatformTransactionManager.class));
	}

	public static class Beeps {

		static final Map<String, AtomicInteger> calls = new ConcurrentHashMap<>();

		static void reset() {
			calls.clear();
		}

		@DurableEffect(name = "beep")
		public void beep() {
			calls.computeIfAbsent(EffectContext.current().idempotencyKey(), (key) -> new AtomicInteger())
				.incrementAndGet();
		}

		@Configuration(proxyBeanMethods = false)
		static class Config {

			@Bean
			Beeps beeps() {
				return new Beeps();
			}

		}

	}

}
