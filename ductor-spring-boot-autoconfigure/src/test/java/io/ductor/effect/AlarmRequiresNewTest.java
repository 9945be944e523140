package io.ductor.effect;

import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import javax.sql.DataSource;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.support.TransactionTemplate;

import io.ductor.test.PostgresExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/**
 * An alarm rescheduled (or cancelled, paused) in a {@code REQUIRES_NEW} transaction
 * inside one that holds that alarm until its commit: the inner transaction would wait for
 * the outer one, which waits for it on the same thread, holding two connections for ever.
 * The call must end with an error naming the alarm; what the outer transaction did
 * commits as it would have. A {@code NESTED} transaction is the outer one: it reschedules
 * the alarm it holds.
 */
class AlarmRequiresNewTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	static ConfigurableApplicationContext context;

	@BeforeAll
	static void start() {
		context = EffectInstances.start(postgres.database(), TestEffects.Config.class,
				"ductor.effects.reconciler.interval=1h", "ductor.retention.interval=1h",
				"ductor.effects.alarm-scheduler.enabled=false");
	}

	@AfterAll
	static void stop() {
		context.close();
	}

	@Test
	void aRequiresNewTransactionReschedulingTheAlarmItsSuspendedTransactionScheduledFailsNamingIt() throws Exception {
		String alarm = "alarm-" + UUID.randomUUID();
		Throwable outcome = outerThenInner(
				() -> outbox().scheduleAlarm(alarm, Duration.ofHours(1), EffectRequest.of("notify", "outer")),
				() -> outbox().scheduleAlarm(alarm, Duration.ofHours(1), EffectRequest.of("notify", "inner")));
		assertRefused(outcome, alarm);
		assertThat(occurrences(alarm)).as("the outer transaction's occurrence").isOne();
	}

	@Test
	void aRequiresNewTransactionCancellingTheAlarmItsSuspendedTransactionScheduledFailsNamingIt() throws Exception {
		String alarm = "alarm-" + UUID.randomUUID();
		Throwable outcome = outerThenInner(
				() -> outbox().scheduleAlarm(alarm, Duration.ofHours(1), EffectRequest.of("notify", "outer")),
				() -> outbox().cancelAlarm(alarm));
		assertRefused(outcome, alarm);
		assertThat(occurrences(alarm)).isOne();
	}

	@Test
	void aRequiresNewTransactionReschedulingTheRecurringAlarmItsSuspendedTransactionDeclaredFailsNamingIt()
			throws Exception {
		String alarm = "recurring-" + UUID.randomUUID();
		Throwable outcome = outerThenInner(
				() -> alarms().scheduleRecurring(alarm, AlarmSchedule.every(Duration.ofHours(1)),
						EffectRequest.of("notify", "outer")),
				() -> alarms().scheduleRecurring(alarm, AlarmSchedule.every(Duration.ofHours(2)),
						EffectRequest.of("notify", "inner")));
		assertRefused(outcome, alarm);
		assertThat(recurring(alarm)).as("the outer transaction's declaration").isOne();
	}

	@Test
	void aRequiresNewTransactionPausingTheRecurringAlarmItsSuspendedTransactionChangedFailsNamingIt() throws Exception {
		String alarm = "recurring-" + UUID.randomUUID();
		tx().executeWithoutResult((status) -> alarms().scheduleRecurring(alarm,
				AlarmSchedule.every(Duration.ofHours(1)), EffectRequest.of("notify", "first")));
		Throwable outcome = outerThenInner(() -> alarms().pauseRecurring(alarm), () -> alarms().cancelRecurring(alarm));
		assertRefused(outcome, alarm);
		assertThat(recurring(alarm)).isOne();
	}

	@Test
	void aRequiresNewTransactionRecordingTheKeyItsSuspendedTransactionRecordedFailsNamingIt() throws Exception {
		String key = "key-" + UUID.randomUUID();
		Throwable outcome = outerThenInner(() -> outbox().schedule(EffectRequest.of("later", key)),
				() -> outbox().schedule(EffectRequest.of("later", key)));
		assertRefused(outcome, key);
		assertThat(JdbcClient.create(context.getBean(DataSource.class))
			.sql("SELECT count(*) FROM eec_effect_intent WHERE idempotency_key = ?")
			.param(key)
			.query(Long.class)
			.single()).isOne();
	}

	@Test
	void aNestedTransactionReschedulesTheAlarmItsOuterTransactionScheduled() {
		String alarm = "alarm-" + UUID.randomUUID();
		TransactionTemplate nested = tx();
		nested.setPropagationBehavior(TransactionDefinition.PROPAGATION_NESTED);
		tx().executeWithoutResult((status) -> {
			outbox().scheduleAlarm(alarm, Duration.ofHours(1), EffectRequest.of("notify", "outer"));
			nested.executeWithoutResult(
					(savepoint) -> outbox().scheduleAlarm(alarm, Duration.ofHours(1), EffectRequest.of("notify", "n")));
		});
		// and the thread's next transaction reschedules it again
		tx().executeWithoutResult(
				(status) -> outbox().scheduleAlarm(alarm, Duration.ofHours(1), EffectRequest.of("notify", "next")));
		assertThat(occurrences(alarm)).isOne();
	}

	private static void assertRefused(Throwable outcome, String name) {
		assertThat(outcome).isInstanceOf(DurableEffectException.class)
			.hasMessageContaining("'" + name + "'")
			.hasMessageContaining("REQUIRES_NEW");
	}

	/**
	 * Runs {@code outer} in a transaction and, inside it, {@code inner} in a
	 * {@code REQUIRES_NEW} transaction, the outer one committing whatever the inner one
	 * threw.
	 * @return what the inner call threw, or {@code null}
	 */
	private static Throwable outerThenInner(Runnable outer, Runnable inner) throws Exception {
		TransactionTemplate requiresNew = tx();
		requiresNew.setPropagationBehavior(TransactionDefinition.PROPAGATION_REQUIRES_NEW);
		CompletableFuture<Throwable> ended = CompletableFuture.supplyAsync(() -> {
			Throwable[] thrown = new Throwable[1];
			tx().executeWithoutResult((status) -> {
				outer.run();
				try {
					requiresNew.executeWithoutResult((status2) -> inner.run());
				}
				catch (RuntimeException ex) {
					thrown[0] = ex;
				}
			});
			return thrown[0];
		});
		try {
			return ended.get(10, TimeUnit.SECONDS);
		}
		catch (TimeoutException ex) {
			// set the thread free: end the inner transaction's wait
			JdbcClient.create(postgres.dataSource())
				.sql("SELECT pg_terminate_backend(pid) FROM pg_locks WHERE NOT granted AND pid <> pg_backend_pid()")
				.query()
				.listOfRows();
			try {
				ended.get(30, TimeUnit.SECONDS);
			}
			catch (Exception ignored) {
				// the outer transaction may fail too
			}
			fail("the REQUIRES_NEW transaction waited 10 s for what its own suspended transaction holds");
			return null;
		}
	}

	private static long occurrences(String alarm) {
		return JdbcClient.create(context.getBean(DataSource.class))
			.sql("SELECT count(*) FROM eec_effect_intent WHERE alarm_name = ? AND status = 'pending'")
			.param(alarm)
			.query(Long.class)
			.single();
	}

	private static long recurring(String alarm) {
		return JdbcClient.create(context.getBean(DataSource.class))
			.sql("SELECT count(*) FROM eec_recurring_alarm WHERE name = ?")
			.param(alarm)
			.query(Long.class)
			.single();
	}

	private static EffectOutbox outbox() {
		return context.getBean(EffectOutbox.class);
	}

	private static RecurringAlarms alarms() {
		return context.getBean(RecurringAlarms.class);
	}

	private static TransactionTemplate tx() {
		return new TransactionTemplate(context.getBean(PlatformTransactionManager.class));
	}

}
