package io.ductor.effect;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;

import javax.sql.DataSource;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.context.ApplicationListener;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import io.ductor.IdempotencyKeyReuseException;
import io.ductor.effect.TestEffects.Item;
import io.ductor.effect.internal.EffectDrainer;
import io.ductor.jdbc.BrokerTransactionManager;
import io.ductor.test.PostgresExtension;
import io.ductor.worker.internal.PeriodicWorker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

class DurableEffectTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	static ConfigurableApplicationContext context;

	static TestEffects effects;

	static EffectOutbox outbox;

	static EffectOperations operations;

	static RecordingReceiver receiver;

	static TransactionTemplate tx;

	static JdbcClient jdbc;

	static final List<EffectNeedsDecisionEvent> decisions = new CopyOnWriteArrayList<>();

	@BeforeAll
	static void start() {
		context = EffectInstances.start(postgres.database(), TestEffects.Config.class,
				"ductor.effects.drainer.poll-interval=100ms", "ductor.effects.backoff.initial=20ms",
				"ductor.effects.backoff.max=100ms", "ductor.effects.reconciler.interval=1h",
				"ductor.retention.interval=1h");
		context.addApplicationListener(
				ApplicationListener.forPayload((EffectNeedsDecisionEvent event) -> decisions.add(event)));
		effects = context.getBean(TestEffects.class);
		outbox = context.getBean(EffectOutbox.class);
		operations = context.getBean(EffectOperations.class);
		receiver = context.getBean(RecordingReceiver.class);
		tx = new TransactionTemplate(context.getBean(PlatformTransactionManager.class));
		jdbc = JdbcClient.create(context.getBean(DataSource.class));
	}

	@AfterAll
	static void stop() {
		context.close();
	}

	static EffectIntent awaitStatus(String key, EffectStatus status) {
		return await().atMost(Duration.ofSeconds(20))
			.until(() -> operations.findByKey(key).orElseThrow(), (intent) -> intent.status() == status);
	}

	static long intents(String key) {
		return jdbc.sql("SELECT count(*) FROM eec_effect_intent WHERE idempotency_key = ?")
			.param(key)
			.query(Long.class)
			.single();
	}

	@Test
	void aCommittedCallIsRecordedOnceAndDispatchedWithItsArguments() {
		String order = UUID.randomUUID().toString();
		tx.executeWithoutResult((status) -> effects.ship(order, List.of(new Item("book-1", 2))));
		EffectIntent intent = awaitStatus("ship:" + order, EffectStatus.COMPLETED);
		assertThat(intent.attempts()).isOne();
		assertThat(intent.finishedAt()).isNotNull();
		assertThat(receiver.log("ship")).filteredOn((row) -> row.get("idempotency_key").equals("ship:" + order))
			.singleElement()
			.satisfies((row) -> {
				assertThat(row.get("payload")).isEqualTo(order + ":[Item[sku=book-1, quantity=2]]");
				assertThat(row.get("attempt")).isEqualTo(1);
				assertThat(row.get("intent_id")).isEqualTo(intent.id());
			});
	}

	@Test
	void aRolledBackTransactionLeavesNoIntentAndNoDispatch() throws Exception {
		String order = UUID.randomUUID().toString();
		tx.executeWithoutResult((status) -> {
			effects.ship(order, List.of());
			status.setRollbackOnly();
		});
		assertThatThrownBy(() -> tx.executeWithoutResult((status) -> {
			effects.ship(order + "-b", List.of());
			throw new IllegalStateException("business failure");
		})).hasMessage("business failure");
		// whatever a commit could have handed to the drainer has run by then
		DrainerSignals.settleAndRestart(context.getBean(EffectDrainer.class));
		assertThat(intents("ship:" + order)).isZero();
		assertThat(intents("ship:" + order + "-b")).isZero();
		assertThat(receiver.log("ship")).noneMatch((row) -> row.get("idempotency_key").toString().contains(order));
	}

	@Test
	void callingAnEffectInsideAMessageBrokersTransactionOnlyThrowsAndWritesNothing() {
		String order = UUID.randomUUID().toString();
		TransactionTemplate broker = new TransactionTemplate(new BrokerTransactionManager());
		assertThatThrownBy(() -> broker.executeWithoutResult((status) -> {
			// the listener read something first: a connection is bound to the broker's
			// transaction, committing every statement on its own
			jdbc.sql("SELECT 1").query(Integer.class).single();
			effects.ship(order, List.of());
		})).isInstanceOf(DurableEffectException.class)
			.hasMessageContaining("Effect 'ship' was called outside a transaction");
		assertThat(intents("ship:" + order)).isZero();
	}

	@Test
	void callingAnEffectOutsideATransactionThrowsAndWritesNothing() {
		String order = UUID.randomUUID().toString();
		assertThatThrownBy(() -> effects.ship(order, List.of())).isInstanceOf(DurableEffectException.class)
			.hasMessageContaining("Effect 'ship' was called outside a transaction")
			.hasMessageContaining("@Transactional");
		assertThat(intents("ship:" + order)).isZero();
	}

	@Test
	void sameKeyAndPayloadAgainRecordsNothingNewAndOtherPayloadIsRefused() {
		String order = UUID.randomUUID().toString();
		tx.executeWithoutResult((status) -> {
			effects.ship(order, List.of(new Item("a", 1)));
			effects.ship(order, List.of(new Item("a", 1)));
		});
		tx.executeWithoutResult((status) -> effects.ship(order, List.of(new Item("a", 1))));
		assertThat(intents("ship:" + order)).isOne();
		List<String> written = new ArrayList<>();
		tx.executeWithoutResult((status) -> {
			assertThatThrownBy(() -> effects.ship(order, List.of(new Item("b", 1))))
				.isInstanceOf(IdempotencyKeyReuseException.class)
				.hasMessageContaining("'ship:" + order + "'");
			// the caller's transaction is still usable and commits its other work
			written.add(outbox.schedule(EffectRequest.of("notify", "after the refused call")));
		});
		assertThat(intents("ship:" + order)).isOne();
		assertThat(intents(written.get(0))).isOne();
		awaitStatus("ship:" + order, EffectStatus.COMPLETED);
	}

	@Test
	void withoutAKeyExpressionEveryCallGetsAFreshKey() {
		String marker = UUID.randomUUID().toString();
		tx.executeWithoutResult((status) -> {
			effects.notify(marker);
			effects.notify(marker);
		});
		assertThat(jdbc.sql("SELECT count(DISTINCT idempotency_key) FROM eec_effect_intent WHERE payload->>0 = ?")
			.param(marker)
			.query(Long.class)
			.single()).isEqualTo(2);
	}

	@Test
	void effectContextTellsTheMethodItsAttempt() {
		String key = "ctx-" + UUID.randomUUID();
		TestEffects.failNext(key, 1, new IllegalStateException("first attempt fails"));
		tx.executeWithoutResult((status) -> effects.scripted(key));
		EffectIntent intent = awaitStatus(key, EffectStatus.COMPLETED);
		assertThat(intent.attempts()).isEqualTo(2);
		assertThat(intent.lastError()).contains("first attempt fails");
		assertThat(receiver.log("scripted")).filteredOn((row) -> row.get("idempotency_key").equals(key))
			.singleElement()
			.satisfies((row) -> {
				assertThat(row.get("attempt")).isEqualTo(2);
				assertThat(row.get("intent_id")).isEqualTo(intent.id());
			});
		assertThatThrownBy(EffectContext::current).isInstanceOf(IllegalStateException.class);
	}

	@Test
	void failuresBackOffExponentiallyWithJitterThenFailWithTheErrorKept() {
		String key = "backoff-" + UUID.randomUUID();
		TestEffects.failNext(key, 10, new IllegalStateException("receiver down"));
		Map<Integer, Double> delays = new java.util.concurrent.ConcurrentHashMap<>();
		tx.executeWithoutResult((status) -> effects.scripted(key));
		await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(2)).until(() -> {
			Map<String, Object> row = jdbc.sql("""
					SELECT status, attempts, extract(epoch FROM next_attempt_at - updated_at) * 1000 AS delay_ms
					FROM eec_effect_intent WHERE idempotency_key = ?""").param(key).query().singleRow();
			if ("pending".equals(row.get("status")) && ((Number) row.get("attempts")).intValue() > 0) {
				delays.put(((Number) row.get("attempts")).intValue(), ((Number) row.get("delay_ms")).doubleValue());
			}
			return "failed".equals(row.get("status"));
		});
		EffectIntent failed = operations.findByKey(key).orElseThrow();
		assertThat(failed.attempts()).isEqualTo(3);
		assertThat(failed.lastError())
			.startsWith("Gave up after 3 attempt(s): java.lang.IllegalStateException: receiver down");
		// the wait after attempt n is between half and all of min(100ms, 20ms * 2^(n-1)),
		// from the database clock
		assertThat(delays).isNotEmpty();
		delays.forEach((attempt, delay) -> {
			double ceiling = Math.min(100, 20 * Math.pow(2, attempt - 1));
			assertThat(delay).as("delay after attempt %d", attempt).isBetween(ceiling / 2, ceiling);
		});
		assertThat(receiver.log("scripted")).noneMatch((row) -> row.get("idempotency_key").equals(key));
	}

	@Test
	void nonRetryableFailuresFailAtOnce() {
		String declared = "noretry-" + UUID.randomUUID();
		String marked = "nonretryable-" + UUID.randomUUID();
		TestEffects.failNext(declared, 5, new IllegalArgumentException("bad request"));
		TestEffects.failNext(marked, 5, new NonRetryableEffectException("refused for good"));
		tx.executeWithoutResult((status) -> {
			effects.scripted(declared);
			effects.scripted(marked);
		});
		assertThat(awaitStatus(declared, EffectStatus.FAILED)).satisfies((intent) -> {
			assertThat(intent.attempts()).isOne();
			assertThat(intent.lastError()).contains("Non-retryable").contains("bad request");
		});
		assertThat(awaitStatus(marked, EffectStatus.FAILED).attempts()).isOne();
	}

	@Test
	void anUncertainOutcomeAtAReceiverThatCannotDeduplicateWaitsForADecision() {
		String key = "mail-" + UUID.randomUUID();
		TestEffects.failNext(key, 1, new IllegalStateException("socket timeout after the request was sent"));
		tx.executeWithoutResult((status) -> effects.mail(key));
		EffectIntent parked = awaitStatus(key, EffectStatus.NEEDS_DECISION);
		assertThat(parked.attempts()).isOne();
		assertThat(parked.lastError()).contains("Outcome unknown").contains("socket timeout");
		await().until(() -> decisions.stream().anyMatch((event) -> event.idempotencyKey().equals(key)));
		assertThat(decisions).filteredOn((event) -> event.idempotencyKey().equals(key))
			.singleElement()
			.satisfies((event) -> {
				assertThat(event.intentId()).isEqualTo(parked.id());
				assertThat(event.effectName()).isEqualTo("mailer");
			});

		EffectIntent retried = operations.resolve(parked.id(), EffectResolution.RETRY);
		assertThat(retried.status()).isEqualTo(EffectStatus.PENDING);
		assertThat(awaitStatus(key, EffectStatus.COMPLETED).attempts()).isEqualTo(2);
		assertThat(receiver.log("mailer")).filteredOn((row) -> row.get("idempotency_key").equals(key)).hasSize(1);
	}

	@Test
	void aFailureKnownNotToHaveBeenAppliedIsRetriedEvenForANonIdempotentReceiver() {
		String key = "mail-notapplied-" + UUID.randomUUID();
		TestEffects.failNext(key, 1, new EffectNotAppliedException("connection refused"));
		tx.executeWithoutResult((status) -> effects.mail(key));
		assertThat(awaitStatus(key, EffectStatus.COMPLETED).attempts()).isEqualTo(2);
	}

	@Test
	void decisionsMarkDoneOrFailedWithoutRunningTheEffect() {
		String done = "mail-done-" + UUID.randomUUID();
		String failed = "mail-failed-" + UUID.randomUUID();
		TestEffects.failNext(done, 1, new IllegalStateException("unknown"));
		TestEffects.failNext(failed, 1, new IllegalStateException("unknown"));
		tx.executeWithoutResult((status) -> {
			effects.mail(done);
			effects.mail(failed);
		});
		long doneId = awaitStatus(done, EffectStatus.NEEDS_DECISION).id();
		long failedId = awaitStatus(failed, EffectStatus.NEEDS_DECISION).id();
		assertThat(operations.resolve(doneId, EffectResolution.MARK_DONE).status()).isEqualTo(EffectStatus.COMPLETED);
		assertThat(operations.resolve(failedId, EffectResolution.MARK_FAILED).status()).isEqualTo(EffectStatus.FAILED);
		assertThatThrownBy(() -> operations.resolve(doneId, EffectResolution.RETRY))
			.isInstanceOf(EffectIntentStateException.class)
			.hasMessageContaining("is completed");
		assertThat(operations.find(doneId).orElseThrow().attempts()).isOne();
		assertThat(receiver.log("mailer"))
			.noneMatch((row) -> row.get("idempotency_key").equals(done) || row.get("idempotency_key").equals(failed));
	}

	@Test
	void aFailedIntentCanBeRetriedWithAFreshBudget() {
		String key = "retry-" + UUID.randomUUID();
		TestEffects.failNext(key, 3, new IllegalStateException("down"));
		tx.executeWithoutResult((status) -> effects.scripted(key));
		EffectIntent failed = awaitStatus(key, EffectStatus.FAILED);
		assertThat(operations.retry(failed.id()).maxAttempts()).isEqualTo(6);
		assertThat(awaitStatus(key, EffectStatus.COMPLETED).attempts()).isEqualTo(4);
	}

	@Test
	void aCancelledIntentNeverRuns() {
		String key = "cancel-" + UUID.randomUUID();
		tx.executeWithoutResult((status) -> effects.later(key));
		EffectIntent pending = operations.findByKey(key).orElseThrow();
		assertThat(pending.status()).isEqualTo(EffectStatus.PENDING);
		assertThat(pending.nextAttemptAt()).isAfter(pending.createdAt().plusMinutes(59));
		assertThat(operations.cancel(pending.id()).status()).isEqualTo(EffectStatus.CANCELLED);
		assertThatThrownBy(() -> operations.cancel(pending.id())).isInstanceOf(EffectIntentStateException.class);
		jdbc.sql("UPDATE eec_effect_intent SET next_attempt_at = now() WHERE id = ?").param(pending.id()).update();
		assertThatThrownBy(() -> operations.cancel(Long.MAX_VALUE)).isInstanceOf(EffectIntentStateException.class)
			.hasMessageContaining("No effect intent with id");
	}

	@Test
	void reschedulingAnAlarmCancelsItsPendingOccurrenceAndUsesANewKey() {
		String alarm = "reminder-" + UUID.randomUUID();
		String first = tx
			.execute((status) -> outbox.scheduleAlarm(alarm, Duration.ofHours(1), EffectRequest.of("notify", "first")));
		String second = tx
			.execute((status) -> outbox.scheduleAlarm(alarm, Duration.ZERO, EffectRequest.of("notify", "second")));
		assertThat(first).isNotEqualTo(second).startsWith("alarm:" + alarm + ":");
		assertThat(operations.findByKey(first).orElseThrow().status()).isEqualTo(EffectStatus.CANCELLED);
		assertThat(awaitStatus(second, EffectStatus.COMPLETED).alarmName()).isEqualTo(alarm);
		String third = tx
			.execute((status) -> outbox.scheduleAlarm(alarm, Duration.ofHours(1), EffectRequest.of("notify", "third")));
		Boolean cancelled = tx.execute((status) -> outbox.cancelAlarm(alarm));
		assertThat(cancelled).isEqualTo(Boolean.TRUE);
		assertThat(operations.findByKey(third).orElseThrow().status()).isEqualTo(EffectStatus.CANCELLED);
		Boolean again = tx.execute((status) -> outbox.cancelAlarm(alarm));
		assertThat(again).isEqualTo(Boolean.FALSE);
	}

	@Test
	void anIntentWhoseEffectNoLongerExistsIsFailedWithAClearErrorNotDropped() {
		String key = "gone-" + UUID.randomUUID();
		jdbc.sql("""
				INSERT INTO eec_effect_intent (effect_name, idempotency_key, payload, payload_fingerprint, max_attempts)
				VALUES ('RemovedService.send', ?, '["x"]', 'f', 5)""").param(key).update();
		operations.findByKey(key).ifPresent((intent) -> context.getBean(EffectDrainer.class).wakeUp());
		EffectIntent failed = awaitStatus(key, EffectStatus.FAILED);
		assertThat(failed.lastError()).contains("Effect 'RemovedService.send' does not exist in this application");
	}

	@Test
	void aStoredPayloadThatNoLongerFitsTheMethodFailsWithAClearError() {
		String key = "changed-" + UUID.randomUUID();
		jdbc.sql("""
				INSERT INTO eec_effect_intent (effect_name, idempotency_key, payload, payload_fingerprint, max_attempts)
				VALUES ('ship', ?, '[{"unexpected": true}, 42]', 'f', 5)""").param(key).update();
		EffectIntent failed = awaitStatus(key, EffectStatus.FAILED);
		assertThat(failed.lastError()).contains("Cannot read the stored arguments of effect 'ship'");
	}

	@Test
	void aLeaseThatExpiredMidCallIsRedrivenAndTheStaleAttemptCannotSettleTheNewOne() throws Exception {
		String key = "fenced-" + UUID.randomUUID();
		CountDownLatch gate = new CountDownLatch(1);
		CountDownLatch firstStarted = new CountDownLatch(1);
		TestEffects.gates.put(key, gate);
		TestEffects.started.put(key, firstStarted);
		// the first attempt throws once released, after its lease was lost: it must not
		// fail the intent
		TestEffects.failingAttempt.put(key, 1);
		tx.executeWithoutResult((status) -> effects.scripted(key));
		firstStarted.await();
		jdbc.sql(
				"UPDATE eec_effect_intent SET lease_expires_at = now() - interval '1 second' WHERE idempotency_key = ?")
			.param(key)
			.update();
		TestEffects.gates.remove(key);
		context.getBean("ductorReconcilerWorker", PeriodicWorker.class).runRound();
		EffectIntent redriven = awaitStatus(key, EffectStatus.COMPLETED);
		assertThat(redriven.attempts()).isEqualTo(2);
		gate.countDown();
		await().atMost(Duration.ofSeconds(10))
			.until(() -> receiver.log("scripted").stream().anyMatch((row) -> row.get("idempotency_key").equals(key)));
		// the stale attempt's outcome is recorded, or fenced off, by then
		DrainerSignals.settleAndRestart(context.getBean(EffectDrainer.class));
		EffectIntent after = operations.findByKey(key).orElseThrow();
		assertThat(after.status()).isEqualTo(EffectStatus.COMPLETED);
		assertThat(after.attempts()).isEqualTo(2);
		assertThat(after.lastError()).contains("Lease of").doesNotContain("fails late");
	}

	@Test
	void theReconcilerParksAnExpiredNonIdempotentAttemptThatStartedInsteadOfRetryingIt() {
		String key = "mail-expired-" + UUID.randomUUID();
		long id = jdbc.sql("""
				INSERT INTO eec_effect_intent (effect_name, idempotency_key, payload, payload_fingerprint, max_attempts,
				    receiver, status, attempts, lease_owner, lease_expires_at, attempt_started_at)
				VALUES ('mailer', ?, '["x"]', 'f', 5, 'NOT_IDEMPOTENT', 'in_flight', 1, 'crashed-instance',
				    now() - interval '1 second', now() - interval '2 seconds') RETURNING id""")
			.param(key)
			.query(Long.class)
			.single();
		context.getBean("ductorReconcilerWorker", PeriodicWorker.class).runRound();
		EffectIntent parked = operations.find(id).orElseThrow();
		assertThat(parked.status()).isEqualTo(EffectStatus.NEEDS_DECISION);
		assertThat(parked.lastError()).contains("Lease of crashed-instance expired during attempt 1");
		assertThat(parked.leaseOwner()).isNull();
	}

}
