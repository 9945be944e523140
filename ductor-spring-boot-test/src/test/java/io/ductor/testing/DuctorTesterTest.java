package io.ductor.testing;

import java.io.IOException;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.support.TransactionTemplate;

import io.ductor.effect.AlarmSchedule;
import io.ductor.effect.EffectIntent;
import io.ductor.effect.EffectOutbox;
import io.ductor.effect.EffectRequest;
import io.ductor.effect.EffectStatus;
import io.ductor.effect.RecurringAlarms;
import io.ductor.effect.internal.EffectDrainer;
import io.ductor.idempotency.IdempotencyService;
import io.ductor.idempotency.IdempotentRequest;
import io.ductor.idempotency.IdempotentResult;
import io.ductor.test.PostgresExtension;
import io.ductor.testing.bakery.Bakery;
import io.ductor.testing.bakery.BakeryDatabase;
import io.ductor.worker.internal.PeriodicWorker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * Every method of {@link DuctorTester} on real PostgreSQL, in one cached context whose
 * tests run in a fixed order, so that a test also proves the previous one left no time,
 * fault or effect behind.
 */
@SpringBootTest(classes = Bakery.class)
@AutoConfigureDuctorTester
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class DuctorTesterTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	@DynamicPropertySource
	static void database(DynamicPropertyRegistry registry) {
		BakeryDatabase.register(postgres.database(), registry);
	}

	static final List<List<String>> drainRuns = new ArrayList<>();

	@Autowired
	DuctorTester ductor;

	@Autowired
	Bakery.Orders orders;

	@Autowired
	Bakery.Payments payments;

	@Autowired
	Bakery.Outside outside;

	@Autowired
	Bakery.Audit audit;

	@Autowired
	TransactionTemplate transactions;

	@Autowired
	EffectOutbox outbox;

	@Autowired
	RecurringAlarms alarms;

	@Autowired
	IdempotencyService idempotency;

	@Autowired
	org.springframework.context.ApplicationContext context;

	JdbcClient jdbc;

	@BeforeEach
	void setUp() {
		this.jdbc = JdbcClient.create(postgres.dataSource());
		this.outside.clear();
		this.payments.charged().clear();
		this.audit.logged().clear();
	}

	@Test
	@Order(1)
	void theBackgroundWorkersDoNotRunAndNothingRunsUntilDrained() {
		assertThat(this.context.getBeansOfType(EffectDrainer.class)).isEmpty();
		assertThat(this.context.getBeansOfType(PeriodicWorker.class)).isEmpty();
		this.orders.place("o-1", 100);
		assertThat(this.payments.charged()).isEmpty();
		this.ductor.assertEffects().hasOne("payment.charge").hasStatus(EffectStatus.PENDING).hasAttempts(0);
		List<EffectIntent> ran = this.ductor.drain();
		assertThat(ran).extracting(EffectIntent::effectName, EffectIntent::status)
			.containsExactly(org.assertj.core.groups.Tuple.tuple("payment.charge", EffectStatus.COMPLETED));
		assertThat(this.payments.charged()).containsExactly("o-1");
		assertThat(this.ductor.drain()).as("nothing due any more").isEmpty();
	}

	@Test
	@Order(2)
	void assertionsSeeOnlyTheEffectsOfTheCurrentTestAndFailWithAMessage() {
		this.ductor.assertEffects().isEmpty();
		record(() -> this.outside.remind("o-x"));
		assertThatExceptionOfType(AssertionError.class).isThrownBy(() -> this.ductor.assertEffects().isEmpty())
			.withMessageContaining("reminder.send");
		assertThatExceptionOfType(AssertionError.class)
			.isThrownBy(() -> this.ductor.assertEffects().hasOne("reminder.send").hasArguments("o-y"))
			.withMessageContaining("o-x");
		assertThatExceptionOfType(AssertionError.class)
			.isThrownBy(() -> this.ductor.assertRun("no-such-run").isCompleted())
			.withMessageContaining("no-such-run");
		this.ductor.assertEffects().hasSize(1).hasNo("payment.charge").containsExactly("reminder.send");
		// what a test leaves due, the next test's drain() runs: drain it here
		assertThat(this.ductor.drain()).hasSize(1);
	}

	@RepeatedTest(3)
	@Order(3)
	void drainRunsTheSameIntentsInTheSameOrderWithTheSameOutcomesEveryTime() {
		String run = "d" + drainRuns.size() + "-";
		this.transactions.executeWithoutResult((status) -> {
			this.outside.mail(run + "c");
			this.outside.ledger(run + "a");
			this.outside.remind(run + "b");
		});
		record(() -> this.outside.mail(run + "d"));
		this.ductor.failNext("reminder.send", new IOException("down"));
		this.ductor.outcomeUnknownNext("mail.send");
		List<String> ran = this.ductor.drain()
			.stream()
			.map((intent) -> intent.effectName() + " "
					+ (intent.effectName().equals("reminder.send") ? "(a fresh key)"
							: intent.idempotencyKey().replace(run, ""))
					+ " " + intent.status() + " " + intent.attempts())
			.toList();
		assertThat(ran).containsExactly("mail.send mail:c NEEDS_DECISION 1", "ledger.write ledger:a COMPLETED 1",
				"reminder.send (a fresh key) PENDING 1", "mail.send mail:d COMPLETED 1",
				"audit.log audit:a COMPLETED 1");
		drainRuns.add(ran);
		assertThat(drainRuns).allMatch(ran::equals);
		assertThat(this.audit.logged()).containsExactly(run + "a");
		// leave nothing due for the next test: the reminder's retry runs once its backoff
		// has passed
		this.ductor.advance(Duration.ofHours(1));
		assertThat(this.ductor.drain()).extracting(EffectIntent::effectName, EffectIntent::status)
			.containsExactly(org.assertj.core.groups.Tuple.tuple("reminder.send", EffectStatus.COMPLETED));
	}

	private void record(Runnable effects) {
		this.transactions.executeWithoutResult((status) -> effects.run());
	}

	@Test
	@Order(4)
	void drainOneRunsTheNextIntentOfOneEffectOnly() {
		record(() -> this.outside.mail("first"));
		this.orders.place("o-4", 400);
		assertThat(this.ductor.drainOne("payment.charge")).get()
			.extracting(EffectIntent::effectName, EffectIntent::status)
			.containsExactly("payment.charge", EffectStatus.COMPLETED);
		assertThat(this.outside.mailed()).isEmpty();
		// recorded already claimed, as in production, and handed over at commit: it waits
		// for the drain
		this.ductor.assertEffects().withKey("mail:first").hasStatus(EffectStatus.IN_FLIGHT).hasAttempts(1);
		assertThat(this.ductor.drainOne("payment.charge")).isEmpty();
		assertThat(this.ductor.drain()).extracting(EffectIntent::effectName).containsExactly("mail.send");
	}

	@Test
	@Order(5)
	void anAlarmInAnHourFiresOnceTheClockIsAdvancedAnHour() {
		record(() -> this.orders.remindIn("o-5", Duration.ofHours(1)));
		for (int i = 0; i < 8; i++) {
			// more than the driver's prepareThreshold: the claim runs as a server-side
			// prepared statement
			assertThat(this.ductor.drain()).isEmpty();
		}
		this.ductor.advance(Duration.ofMinutes(59));
		assertThat(this.ductor.drain()).isEmpty();
		this.ductor.advance(Duration.ofMinutes(1));
		assertThat(this.ductor.drain()).extracting(EffectIntent::effectName).containsExactly("reminder.send");
		assertThat(this.outside.reminded()).containsExactly("o-5");
	}

	@Test
	@Order(6)
	void anIdempotencyKeyExpiresOnceTheClockIsAdvancedPastItsTtl() {
		AtomicInteger runs = new AtomicInteger();
		IdempotentRequest request = new IdempotentRequest("tenant", "orders", "key-6", "fp");
		IdempotentResult<Integer> first = this.idempotency.execute(request, Integer.class, runs::incrementAndGet);
		assertThat(this.idempotency.execute(request, Integer.class, runs::incrementAndGet).replayed()).isTrue();
		this.ductor.assertIdempotencyKey("key-6").isCompleted().hasDecision(first.decisionId()).isNotExpired();
		this.ductor.advance(Duration.ofHours(24).minusSeconds(1));
		this.ductor.assertIdempotencyKey("tenant", "orders", "key-6").isNotExpired();
		this.ductor.advance(Duration.ofSeconds(1));
		this.ductor.assertIdempotencyKey("key-6").isExpired();
		IdempotentResult<Integer> again = this.idempotency.execute(request, Integer.class, runs::incrementAndGet);
		assertThat(again.replayed()).isFalse();
		assertThat(runs).hasValue(2);
		this.ductor.assertIdempotencyKey("no-such-key").doesNotExist();
	}

	@Test
	@Order(7)
	void theClockAndTheFaultsOfThePreviousTestAreGone() {
		OffsetDateTime server = this.jdbc.sql("SELECT clock_timestamp()").query(OffsetDateTime.class).single();
		assertThat(Duration.between(this.ductor.now(), server).abs()).isLessThan(Duration.ofMinutes(1));
		this.ductor.failNext("mail.send", 5, new IllegalStateException("left over"));
		this.ductor.advance(Duration.ofDays(10));
		assertThatIllegalArgumentException().isThrownBy(() -> this.ductor.advance(Duration.ofSeconds(-1)));
	}

	@Test
	@Order(8)
	void afterATestThatQueuedFaultsAndMovedTheClockTheNextStartsClean() {
		OffsetDateTime server = this.jdbc.sql("SELECT clock_timestamp()").query(OffsetDateTime.class).single();
		assertThat(Duration.between(this.ductor.now(), server).abs()).isLessThan(Duration.ofMinutes(1));
		record(() -> this.outside.mail("clean"));
		this.ductor.drain();
		this.ductor.assertEffects().hasOne("mail.send").isCompleted();
		assertThat(this.outside.mailed()).containsExactly("clean");
	}

	@Test
	@Order(9)
	void injectedFailuresUseUpTheAttemptsAndFailTheIntentWithoutCallingTheBean() {
		this.orders.place("o-9", 900);
		this.ductor.failNext("payment.charge", 3, new IllegalStateException("card declined"));
		for (int i = 0; i < 3; i++) {
			this.ductor.drain();
			this.ductor.advance(Duration.ofMinutes(10));
		}
		this.ductor.assertEffects()
			.hasOne("payment.charge")
			.hasStatus(EffectStatus.FAILED)
			.hasAttempts(3)
			.hasErrorContaining("card declined");
		assertThat(this.payments.charged()).isEmpty();
		this.ductor.assertRun("o-9")
			.hasStatus(io.ductor.run.RunStatus.ACTIVE)
			.hasTransitions("placed")
			.hasTransitionCount(1);
	}

	@Test
	@Order(10)
	void anUnknownOutcomeAtAReceiverThatCannotDeduplicateWaitsForADecision() {
		record(() -> this.outside.mail("unsure"));
		this.ductor.outcomeUnknownNext("mail.send");
		this.ductor.drain();
		this.ductor.assertEffects().hasOne("mail.send").hasStatus(EffectStatus.NEEDS_DECISION).hasAttempts(1);
		assertThat(this.outside.mailed()).isEmpty();
		this.ductor.advance(Duration.ofDays(1));
		assertThat(this.ductor.drain()).as("never retried blindly").isEmpty();
	}

	@Test
	@Order(11)
	void anUnknownOutcomeOfAnEffectWithAReconcilerIsReconciledOnceItsRoundIsDue() {
		record(() -> this.outside.ship("p-11"));
		this.ductor.outcomeUnknownNext("parcel.ship");
		this.ductor.drain();
		this.ductor.assertEffects().hasOne("parcel.ship").hasStatus(EffectStatus.RECONCILING);
		this.ductor.advance(Duration.ofSeconds(1));
		this.ductor.drain();
		this.ductor.assertEffects().hasOne("parcel.ship").isCompleted().hasAttempts(1);
		assertThat(this.outside.shipped()).as("the reconciler said it was applied: not sent again").isEmpty();
	}

	@Test
	@Order(12)
	void anIntentLeftInFlightByACrashedInstanceIsRedrivenOnceTheClockPassesItsLease() {
		// with ordering keys: recorded pending, for any instance to claim
		record(() -> this.outbox.schedule(EffectRequest.of("reminder.send", "o-12").withOrderingKey("o-12")));
		record(() -> this.outbox
			.schedule(EffectRequest.of("mail.send", "crash").withKey("mail:crash").withOrderingKey("crash")));
		// another instance claimed both, marked the mail started, and died
		this.jdbc.sql("""
				UPDATE eec_effect_intent SET status = 'in_flight', attempts = 1, lease_owner = 'dead',
				    lease_expires_at = ductor_now() + interval '30 seconds',
				    attempt_started_at = CASE WHEN effect_name = 'mail.send' THEN ductor_now() END
				WHERE status = 'pending'""").update();
		assertThat(this.ductor.drain()).as("the lease is live").isEmpty();
		this.ductor.advance(Duration.ofSeconds(31));
		assertThat(this.ductor.drain()).extracting(EffectIntent::effectName, EffectIntent::attempts)
			.containsExactly(org.assertj.core.groups.Tuple.tuple("reminder.send", 2));
		this.ductor.assertEffects().withKey("mail:crash").hasStatus(EffectStatus.NEEDS_DECISION);
		assertThat(this.outside.reminded()).containsExactly("o-12");
		assertThat(this.outside.mailed()).isEmpty();
	}

	@Test
	@Order(13)
	@org.springframework.transaction.annotation.Transactional
	void inATestManagedTransactionDrainAndAdvanceRefuseWithAnExplanation() {
		record(() -> this.outside.mail("rolled-back"));
		org.assertj.core.api.Assertions.assertThatIllegalStateException()
			.isThrownBy(() -> this.ductor.drain())
			.withMessageContaining("@Transactional");
		org.assertj.core.api.Assertions.assertThatIllegalStateException()
			.isThrownBy(() -> this.ductor.advance(Duration.ofHours(1)));
	}

	@Test
	@Order(14)
	void aRecurringAlarmRecordsOneOccurrencePerPeriodAsTheClockAdvances() {
		OffsetDateTime start = this.ductor.now();
		this.transactions.executeWithoutResult((status) -> this.alarms.scheduleRecurring("hourly",
				AlarmSchedule.every(Duration.ofHours(1)), EffectRequest.of("reminder.send", "hourly")));
		assertThat(this.ductor.drain()).isEmpty();
		this.ductor.advance(Duration.ofHours(1));
		assertThat(this.ductor.drain()).extracting(EffectIntent::effectName).containsExactly("reminder.send");
		assertThat(this.ductor.drainOne("reminder.send")).isEmpty();
		this.ductor.advance(Duration.ofHours(1));
		assertThat(this.ductor.drainOne("reminder.send")).isPresent();
		assertThat(this.outside.reminded()).containsExactly("hourly", "hourly");
		assertThat(this.ductor.recordedEffects()).extracting(EffectIntent::idempotencyKey)
			.allSatisfy((key) -> assertThat(key).startsWith("alarm:hourly@"))
			.doesNotHaveDuplicates()
			.hasSize(2);
		assertThat(this.ductor.now()).isEqualTo(start.plusHours(2));
		this.transactions.executeWithoutResult((status) -> this.alarms.cancelRecurring("hourly"));
	}

	@Test
	@Order(15)
	void aRecurringAlarmFiresAsTheClockOfThisTestAdvances() {
		this.transactions.executeWithoutResult((status) -> this.alarms.scheduleRecurring("every-hour",
				AlarmSchedule.every(Duration.ofHours(1)), EffectRequest.of("reminder.send", "every-hour")));
		for (int hour = 0; hour < 3; hour++) {
			this.ductor.advance(Duration.ofHours(1));
			assertThat(this.ductor.drain()).extracting(EffectIntent::effectName).containsExactly("reminder.send");
		}
	}

	@Test
	@Order(16)
	void theNextTestFindsTheAlarmAsTheServersClockHasItNotAsTheLastTestLeftIt() {
		assertThat(this.ductor.drain()).as("nothing due at the start of a test").isEmpty();
		this.ductor.advance(Duration.ofHours(1));
		assertThat(this.ductor.drain()).extracting(EffectIntent::effectName).containsExactly("reminder.send");
		assertThat(this.outside.reminded()).containsExactly("every-hour");
		this.transactions.executeWithoutResult((status) -> this.alarms.cancelRecurring("every-hour"));
	}

	@Test
	@Order(17)
	void anIntentDueAtCommitIsHandedOverAtCommitAndRunsAtTheNextDrainAsInProduction() {
		record(() -> this.outside.remind("at-commit"));
		this.ductor.assertEffects().hasOne("reminder.send").hasStatus(EffectStatus.IN_FLIGHT).hasAttempts(1);
		assertThat(this.outside.reminded()).isEmpty();
		assertThat(this.ductor.drain()).extracting(EffectIntent::status, EffectIntent::attempts)
			.containsExactly(org.assertj.core.groups.Tuple.tuple(EffectStatus.COMPLETED, 1));
		assertThat(this.outside.reminded()).containsExactly("at-commit");
	}

	@Test
	@Order(18)
	void transactionsInsideTransactionsRunWhatTheyCommitOnceAndNothingElse() {
		TransactionTemplate requiresNew = new TransactionTemplate(this.transactions.getTransactionManager());
		requiresNew.setPropagationBehavior(TransactionDefinition.PROPAGATION_REQUIRES_NEW);
		TransactionTemplate nested = new TransactionTemplate(this.transactions.getTransactionManager());
		nested.setPropagationBehavior(TransactionDefinition.PROPAGATION_NESTED);
		this.transactions.executeWithoutResult((status) -> {
			this.outside.remind("outer");
			requiresNew.executeWithoutResult((inner) -> {
				this.outside.remind("inner-rolled-back");
				inner.setRollbackOnly();
			});
			requiresNew.executeWithoutResult((inner) -> this.outside.remind("inner-committed"));
		});
		this.transactions.executeWithoutResult((status) -> {
			this.outside.remind("beside-a-savepoint");
			nested.executeWithoutResult((savepoint) -> {
				this.outside.remind("savepoint-rolled-back");
				savepoint.setRollbackOnly();
			});
		});
		this.transactions.executeWithoutResult((status) -> {
			this.outside.remind("rolled-back-outer");
			requiresNew.executeWithoutResult((inner) -> this.outside.remind("committed-inside-rolled-back"));
			status.setRollbackOnly();
		});

		this.ductor.drain();
		assertThat(this.outside.reminded()).containsExactlyInAnyOrder("outer", "inner-committed", "beside-a-savepoint",
				"committed-inside-rolled-back");
		this.ductor.assertEffects().hasSize(4);
		assertThat(this.ductor.recordedEffects())
			.allSatisfy((intent) -> assertThat(intent).extracting(EffectIntent::status, EffectIntent::attempts)
				.containsExactly(EffectStatus.COMPLETED, 1));
	}

}
