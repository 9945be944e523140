package io.ductor.effect;

import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import javax.sql.DataSource;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import io.ductor.actuate.internal.DuctorEndpoint;
import io.ductor.actuate.internal.DuctorEndpointWebExtension;
import io.ductor.effect.internal.DrainerLeases.LeaseBeat;
import io.ductor.effect.internal.DrainerLeases;
import io.ductor.effect.internal.EffectDrainer;
import io.ductor.effect.internal.IntentClaims;
import io.ductor.effect.internal.IntentOutcomes.Completion;
import io.ductor.effect.internal.IntentOutcomes;
import io.ductor.effect.internal.IntentRetention;
import io.ductor.effect.internal.Settled;
import io.ductor.test.PostgresExtension;
import io.ductor.worker.internal.PeriodicWorker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * An alarm rescheduled while its occurrence runs, and rows that break a constraint inside
 * a batch statement: the offender is recorded on its own row and the rest of the batch
 * commits.
 */
class BatchFaultsTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	static ConfigurableApplicationContext context;

	static EffectOutbox outbox;

	static EffectOperations operations;

	static TestEffects effects;

	static TransactionTemplate tx;

	static JdbcClient jdbc;

	static IntentOutcomes outcomes;

	static DrainerLeases leases;

	static IntentRetention retention;

	@BeforeAll
	static void start() {
		context = EffectInstances.start(postgres.database(), TestEffects.Config.class,
				"ductor.effects.drainer.poll-interval=100ms", "ductor.effects.backoff.initial=20ms",
				"ductor.effects.backoff.max=100ms", "ductor.effects.reconciler.interval=1h",
				"ductor.retention.enabled=false");
		outbox = context.getBean(EffectOutbox.class);
		operations = context.getBean(EffectOperations.class);
		effects = context.getBean(TestEffects.class);
		tx = new TransactionTemplate(context.getBean(PlatformTransactionManager.class));
		DataSource dataSource = context.getBean(DataSource.class);
		jdbc = JdbcClient.create(dataSource);
		outcomes = new IntentOutcomes(dataSource);
		leases = new DrainerLeases(dataSource);
		retention = new IntentRetention(dataSource);
	}

	@AfterAll
	static void stop() {
		context.close();
	}

	static EffectIntent awaitStatus(String key, EffectStatus status) {
		return await().atMost(Duration.ofSeconds(20))
			.until(() -> operations.findByKey(key).orElseThrow(), (intent) -> intent.status() == status);
	}

	/** An intent row as a crashed, raced or older instance may have left it. */
	static long insert(String effect, String key, String status, String alarm) {
		return jdbc
			.sql("""
					INSERT INTO eec_effect_intent (effect_name, idempotency_key, payload, payload_fingerprint, max_attempts,
					    status, alarm_name, attempts, lease_owner, lease_expires_at, next_attempt_at, finished_at, created_at)
					VALUES (?, ?, '["x"]', 'f', 3, ?, ?, CASE WHEN ? = 'pending' THEN 0 ELSE 1 END,
					    CASE WHEN ? = 'in_flight' THEN 'test-owner' END,
					    CASE WHEN ? = 'in_flight' THEN now() + interval '1 hour' END,
					    now() + interval '1 hour',
					    CASE WHEN ? IN ('completed', 'failed') THEN now() - interval '30 days' END,
					    CASE WHEN ? IN ('completed', 'failed') THEN now() - interval '30 days' ELSE now() END)
					RETURNING id""")
			.params(effect, key, status, alarm, status, status, status, status, status)
			.query(Long.class)
			.single();
	}

	@Test
	void anAlarmRescheduledWhileItsOccurrenceRunsCancelsThatOccurrenceInsteadOfRetryingItBesideTheNewOne()
			throws Exception {
		String alarm = "rescheduled-" + UUID.randomUUID();
		String running = "running-" + UUID.randomUUID();
		CountDownLatch gate = new CountDownLatch(1);
		CountDownLatch started = new CountDownLatch(1);
		TestEffects.gates.put(running, gate);
		TestEffects.started.put(running, started);
		TestEffects.failNext(running, 1, new IllegalStateException("receiver timed out"));
		String first = tx
			.execute((status) -> outbox.scheduleAlarm(alarm, Duration.ZERO, EffectRequest.of("scripted", running)));
		assertThat(started.await(20, TimeUnit.SECONDS)).isTrue();
		String second = tx.execute((status) -> outbox.scheduleAlarm(alarm, Duration.ofHours(1),
				EffectRequest.of("scripted", "next-" + UUID.randomUUID())));
		gate.countDown();
		// the running attempt fails retryably: it may not go back to pending beside the
		// newer occurrence
		EffectIntent superseded = awaitStatus(first, EffectStatus.CANCELLED);
		assertThat(superseded.lastError()).contains("superseded by a rescheduled occurrence")
			.contains("receiver timed out");
		assertThat(superseded.finishedAt()).isNotNull();
		assertThat(operations.findByKey(second).orElseThrow().status()).isEqualTo(EffectStatus.PENDING);
		// and the drainer keeps recording outcomes
		String unrelated = "after-" + UUID.randomUUID();
		tx.executeWithoutResult((status) -> effects.scripted(unrelated));
		awaitStatus(unrelated, EffectStatus.COMPLETED);
	}

	@Test
	void anOutcomeRacingWithAnUncommittedRescheduleWaitsForItAndThenSeesTheOccurrenceSuperseded() throws Exception {
		String alarm = "raced-" + UUID.randomUUID();
		String running = "running-" + UUID.randomUUID();
		CountDownLatch gate = new CountDownLatch(1);
		CountDownLatch started = new CountDownLatch(1);
		TestEffects.gates.put(running, gate);
		TestEffects.started.put(running, started);
		TestEffects.failNext(running, 1, new IllegalStateException("receiver timed out"));
		String first = tx
			.execute((status) -> outbox.scheduleAlarm(alarm, Duration.ZERO, EffectRequest.of("scripted", running)));
		assertThat(started.await(20, TimeUnit.SECONDS)).isTrue();
		CountDownLatch rescheduled = new CountDownLatch(1);
		CountDownLatch commit = new CountDownLatch(1);
		java.util.concurrent.CompletableFuture<String> second = java.util.concurrent.CompletableFuture
			.supplyAsync(() -> tx.execute((status) -> {
				String key = outbox.scheduleAlarm(alarm, Duration.ofHours(1),
						EffectRequest.of("scripted", "next-" + UUID.randomUUID()));
				rescheduled.countDown();
				try {
					commit.await(20, TimeUnit.SECONDS);
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
				}
				return key;
			}));
		assertThat(rescheduled.await(20, TimeUnit.SECONDS)).isTrue();
		// the attempt fails while the reschedule has not committed: its outcome waits for
		// the reschedule
		gate.countDown();
		DrainerSignals.awaitStatementWaitingForARowLock(context.getBean(DataSource.class));
		assertThat(operations.findByKey(first).orElseThrow().status()).isEqualTo(EffectStatus.IN_FLIGHT);
		commit.countDown();
		String newer = second.get(20, TimeUnit.SECONDS);
		assertThat(awaitStatus(first, EffectStatus.CANCELLED).lastError()).contains("superseded");
		assertThat(operations.findByKey(newer).orElseThrow().status()).isEqualTo(EffectStatus.PENDING);
	}

	@Test
	void anOpenRescheduleTransactionDoesNotHoldUpTheHeartbeatOfTheOtherRunningEffects() throws Exception {
		String alarm = "heartbeat-" + UUID.randomUUID();
		String running = "running-" + UUID.randomUUID();
		String other = "other-" + UUID.randomUUID();
		CountDownLatch gate = new CountDownLatch(1);
		CountDownLatch started = new CountDownLatch(2);
		TestEffects.gates.put(running, gate);
		TestEffects.gates.put(other, gate);
		TestEffects.started.put(running, started);
		TestEffects.started.put(other, started);
		tx.execute((status) -> outbox.scheduleAlarm(alarm, Duration.ZERO, EffectRequest.of("scripted", running)));
		tx.executeWithoutResult((status) -> effects.scripted(other));
		assertThat(started.await(20, TimeUnit.SECONDS)).isTrue();
		CountDownLatch rescheduled = new CountDownLatch(1);
		CountDownLatch commit = new CountDownLatch(1);
		java.util.concurrent.CompletableFuture<String> reschedule = java.util.concurrent.CompletableFuture
			.supplyAsync(() -> tx.execute((status) -> {
				String key = outbox.scheduleAlarm(alarm, Duration.ofHours(1), EffectRequest.of("scripted", "next"));
				rescheduled.countDown();
				try {
					commit.await(20, TimeUnit.SECONDS);
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
				}
				return key;
			}));
		try {
			assertThat(rescheduled.await(20, TimeUnit.SECONDS)).isTrue();
			String owner = context.getBean(EffectDrainer.class).owner();
			long locked = jdbc.sql("SELECT id FROM eec_effect_intent WHERE alarm_name = ? AND status = 'in_flight'")
				.param(alarm)
				.query(Long.class)
				.single();
			long free = operations.findByKey(other).orElseThrow().id();
			java.util.concurrent.CompletableFuture<java.util.Map<Long, LeaseBeat>> heartbeat = java.util.concurrent.CompletableFuture
				.supplyAsync(
						() -> leases.extendLeases(owner, Duration.ofMinutes(5), java.util.Map.of(locked, 1, free, 1)));
			// the locked row is skipped for this beat, its lease still live; the other
			// one
			// is extended
			assertThat(heartbeat.get(5, TimeUnit.SECONDS)).containsEntry(free, LeaseBeat.EXTENDED)
				.containsEntry(locked, LeaseBeat.SKIPPED);
			assertThat(operations.findByKey(other).orElseThrow().leaseExpiresAt())
				.isAfter(java.time.OffsetDateTime.now().plusMinutes(4));
		}
		finally {
			commit.countDown();
			reschedule.get(20, TimeUnit.SECONDS);
			gate.countDown();
		}
		awaitStatus(other, EffectStatus.COMPLETED);
	}

	@Test
	void aRolledBackRescheduleLeavesTheRunningOccurrenceToBeRetriedAsBefore() throws Exception {
		String alarm = "rolledback-" + UUID.randomUUID();
		String running = "running-" + UUID.randomUUID();
		CountDownLatch gate = new CountDownLatch(1);
		CountDownLatch started = new CountDownLatch(1);
		TestEffects.gates.put(running, gate);
		TestEffects.started.put(running, started);
		TestEffects.failNext(running, 1, new IllegalStateException("receiver timed out"));
		String first = tx
			.execute((status) -> outbox.scheduleAlarm(alarm, Duration.ZERO, EffectRequest.of("scripted", running)));
		assertThat(started.await(20, TimeUnit.SECONDS)).isTrue();
		tx.executeWithoutResult((status) -> {
			outbox.scheduleAlarm(alarm, Duration.ofHours(1), EffectRequest.of("scripted", "never"));
			status.setRollbackOnly();
		});
		gate.countDown();
		EffectIntent retried = awaitStatus(first, EffectStatus.COMPLETED);
		assertThat(retried.attempts()).isEqualTo(2);
	}

	@Test
	void aCancelledAlarmsRunningOccurrenceMayCompleteButIsNotRetried() throws Exception {
		String alarm = "cancelled-" + UUID.randomUUID();
		String running = "running-" + UUID.randomUUID();
		CountDownLatch gate = new CountDownLatch(1);
		CountDownLatch started = new CountDownLatch(1);
		TestEffects.gates.put(running, gate);
		TestEffects.started.put(running, started);
		TestEffects.failNext(running, 1, new IllegalStateException("receiver timed out"));
		String first = tx
			.execute((status) -> outbox.scheduleAlarm(alarm, Duration.ZERO, EffectRequest.of("scripted", running)));
		assertThat(started.await(20, TimeUnit.SECONDS)).isTrue();
		Boolean cancelled = tx.execute((status) -> outbox.cancelAlarm(alarm));
		assertThat(cancelled).isEqualTo(Boolean.FALSE);
		gate.countDown();
		assertThat(awaitStatus(first, EffectStatus.CANCELLED).attempts()).isOne();
	}

	@Test
	void aConflictingOutcomeIsFailedWithTheReasonAndTheRestOfItsBatchIsRecorded() {
		String alarm = "conflict-" + UUID.randomUUID();
		String tag = UUID.randomUUID().toString();
		insert("scripted", "newer-" + tag, "pending", alarm);
		// an occurrence left in flight beside a pending one, as no reschedule marked it
		long offender = insert("scripted", "older-" + tag, "in_flight", alarm);
		long done = insert("scripted", "done-" + tag, "in_flight", null);
		long again = insert("scripted", "again-" + tag, "in_flight", null);
		List<Settled> settled = outcomes.complete("test-owner",
				List.of(new Completion(done, 1, EffectStatus.COMPLETED, null, null),
						new Completion(offender, 1, EffectStatus.PENDING, "boom", Duration.ofMillis(10)),
						new Completion(again, 1, EffectStatus.PENDING, "retry me", Duration.ofHours(1))));
		assertThat(settled).extracting(Settled::id).containsExactlyInAnyOrder(done, offender, again);
		assertThat(operations.find(done).orElseThrow().status()).isEqualTo(EffectStatus.COMPLETED);
		assertThat(operations.find(again).orElseThrow().status()).isEqualTo(EffectStatus.PENDING);
		EffectIntent failed = operations.find(offender).orElseThrow();
		assertThat(failed.status()).isEqualTo(EffectStatus.FAILED);
		assertThat(failed.lastError()).contains("could not record the outcome of attempt 1 (pending)")
			.contains("eec_effect_intent_alarm_idx")
			.contains("boom");
		assertThat(failed.leaseOwner()).isNull();
	}

	@Test
	void aConflictingRedriveIsFailedWithTheReasonAndTheOtherExpiredLeasesAreRedriven() {
		String alarm = "redrive-" + UUID.randomUUID();
		String tag = UUID.randomUUID().toString();
		insert("scripted", "newer-" + tag, "pending", alarm);
		long offender = insert("scripted", "older-" + tag, "in_flight", alarm);
		long superseded = insert("scripted", "superseded-" + tag, "in_flight", "other-" + alarm);
		long first = insert("scripted", "first-" + tag, "in_flight", null);
		long second = insert("scripted", "second-" + tag, "in_flight", null);
		jdbc.sql("UPDATE eec_effect_intent SET superseded_at = now() WHERE id = ?").param(superseded).update();
		jdbc.sql("UPDATE eec_effect_intent SET lease_expires_at = now() - interval '1 minute', next_attempt_at = "
				+ "now() + interval '1 hour' WHERE id IN (?, ?, ?, ?)")
			.params(offender, superseded, first, second)
			.update();
		context.getBean("ductorReconcilerWorker", PeriodicWorker.class).runRound();
		// the redrive makes them due at once; the drainer may already be running them
		assertThat(operations.find(first).orElseThrow().lastError()).contains("Lease of test-owner expired");
		assertThat(operations.find(second).orElseThrow().lastError()).contains("Lease of test-owner expired");
		assertThat(operations.find(superseded).orElseThrow()).satisfies((intent) -> {
			assertThat(intent.status()).isEqualTo(EffectStatus.CANCELLED);
			assertThat(intent.lastError()).contains("superseded by a rescheduled occurrence");
		});
		assertThat(operations.find(offender).orElseThrow()).satisfies((intent) -> {
			assertThat(intent.status()).isEqualTo(EffectStatus.FAILED);
			assertThat(intent.lastError()).contains("could not redrive").contains("eec_effect_intent_alarm_idx");
		});
	}

	@Test
	void handingBackCancelsASupersededOccurrenceFailsAConflictingOneAndHandsTheOthersBack() {
		String alarm = "handback-" + UUID.randomUUID();
		String tag = UUID.randomUUID().toString();
		insert("scripted", "newer-" + tag, "pending", alarm);
		long offender = insert("scripted", "older-" + tag, "in_flight", alarm);
		long superseded = insert("scripted", "superseded-" + tag, "in_flight", "other-" + alarm);
		long unstarted = insert("scripted", "unstarted-" + tag, "in_flight", null);
		jdbc.sql("UPDATE eec_effect_intent SET superseded_at = now() WHERE id = ?").param(superseded).update();
		int handedBack = outcomes.handBack("test-owner",
				List.of(claimed(offender), claimed(superseded), claimed(unstarted)));
		assertThat(handedBack).isEqualTo(2);
		assertThat(operations.find(unstarted).orElseThrow()).satisfies((intent) -> {
			assertThat(intent.status()).isEqualTo(EffectStatus.PENDING);
			assertThat(intent.attempts()).isZero();
		});
		assertThat(operations.find(superseded).orElseThrow()).satisfies((intent) -> {
			assertThat(intent.status()).isEqualTo(EffectStatus.CANCELLED);
			assertThat(intent.attempts()).isZero();
			assertThat(intent.lastError()).contains("superseded by a rescheduled occurrence");
		});
		assertThat(operations.find(offender).orElseThrow()).satisfies((intent) -> {
			assertThat(intent.status()).isEqualTo(EffectStatus.FAILED);
			assertThat(intent.lastError()).contains("could not hand back attempt 1")
				.contains("eec_effect_intent_alarm_idx");
		});
	}

	static IntentClaims.ClaimedIntent claimed(long id) {
		return new IntentClaims.ClaimedIntent(id, "scripted", "k", "[\"x\"]", 1, 3, Receiver.IDEMPOTENT, null, null,
				null, null, null);
	}

	@Test
	void aFailedOccurrenceOfARescheduledAlarmIsRefusedClearlyAndBulkRetryRetriesTheOthers() {
		String alarm = "retried-" + UUID.randomUUID();
		String tag = UUID.randomUUID().toString();
		String effect = "later";
		long newer = insert(effect, "newer-" + tag, "pending", alarm);
		long offender = insert(effect, "older-" + tag, "failed", alarm);
		long other = insert(effect, "other-" + tag, "failed", null);
		long another = insert(effect, "another-" + tag, "failed", null);

		assertThatThrownBy(() -> operations.retry(offender)).isInstanceOf(EffectIntentStateException.class)
			.hasMessageContaining("Intent " + offender + " is an occurrence of alarm '" + alarm + "'")
			.hasMessageContaining("intent " + newer + " (key 'newer-" + tag + "') is its pending occurrence");
		DuctorEndpointWebExtension endpoint = new DuctorEndpointWebExtension(
				new DuctorEndpoint(operations, null, null, List.of()));
		assertThat(endpoint.act(offender, "retry", null)).satisfies((response) -> {
			assertThat(response.getStatus()).isEqualTo(409);
			assertThat(response.getBody()).asString().contains("intent " + newer);
		});
		assertThat(operations.find(offender).orElseThrow().status()).isEqualTo(EffectStatus.FAILED);

		assertThat(operations.retryAll(effect, EffectStatus.FAILED)).isEqualTo(2);
		assertThat(operations.find(other).orElseThrow().status()).isNotEqualTo(EffectStatus.FAILED);
		assertThat(operations.find(another).orElseThrow().status()).isNotEqualTo(EffectStatus.FAILED);
		assertThat(operations.find(offender).orElseThrow()).satisfies((intent) -> {
			assertThat(intent.status()).isEqualTo(EffectStatus.FAILED);
			assertThat(intent.lastError()).contains("not retried in bulk").contains("eec_effect_intent_alarm_idx");
		});
	}

	@Test
	void anOperatorRetryRacingWithAnUncommittedRescheduleWaitsAndIsThenRefused() throws Exception {
		String alarm = "operator-" + UUID.randomUUID();
		String tag = UUID.randomUUID().toString();
		long failed = insert("later", "older-" + tag, "failed", alarm);
		CountDownLatch rescheduled = new CountDownLatch(1);
		CountDownLatch commit = new CountDownLatch(1);
		java.util.concurrent.CompletableFuture<String> reschedule = java.util.concurrent.CompletableFuture
			.supplyAsync(() -> tx.execute((status) -> {
				String key = outbox.scheduleAlarm(alarm, Duration.ofHours(1), EffectRequest.of("later", "next"));
				rescheduled.countDown();
				try {
					commit.await(20, TimeUnit.SECONDS);
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
				}
				return key;
			}));
		assertThat(rescheduled.await(20, TimeUnit.SECONDS)).isTrue();
		java.util.concurrent.CompletableFuture<EffectIntent> retry = java.util.concurrent.CompletableFuture
			.supplyAsync(() -> operations.retry(failed));
		DrainerSignals.awaitStatementWaitingForARowLock(context.getBean(DataSource.class));
		assertThat(retry).isNotDone();
		commit.countDown();
		String newer = reschedule.get(20, TimeUnit.SECONDS);
		assertThatThrownBy(() -> retry.get(20, TimeUnit.SECONDS)).hasCauseInstanceOf(EffectIntentStateException.class)
			.hasMessageContaining("(key '" + newer + "') is its pending occurrence");
		assertThat(operations.find(failed).orElseThrow().status()).isEqualTo(EffectStatus.FAILED);
		assertThat(operations.findByKey(newer).orElseThrow().status()).isEqualTo(EffectStatus.PENDING);
	}

	@Test
	void retentionKeepsAnIntentItCannotDeleteAndDeletesTheRestOfTheBatch() {
		String tag = UUID.randomUUID().toString();
		String effect = "purged-" + tag;
		long referenced = insert(effect, "kept-" + tag, "completed", null);
		long first = insert(effect, "gone-" + tag, "completed", null);
		long second = insert(effect, "gone-too-" + tag, "completed", null);
		jdbc.sql(
				"CREATE TABLE IF NOT EXISTS test_intent_reference (intent_id bigint REFERENCES eec_effect_intent (id))")
			.update();
		jdbc.sql("INSERT INTO test_intent_reference VALUES (?)").param(referenced).update();
		int deleted = retention.purge(Duration.ofDays(1), 1000);
		assertThat(deleted).isGreaterThanOrEqualTo(2);
		assertThat(operations.find(first)).isEmpty();
		assertThat(operations.find(second)).isEmpty();
		EffectIntent kept = operations.find(referenced).orElseThrow();
		assertThat(kept.lastError()).contains("kept by retention").contains("test_intent_reference");
		assertThat(kept.finishedAt()).isAfter(java.time.OffsetDateTime.now().minusDays(1));
		assertThat(retention.purge(Duration.ofDays(1), 1000)).isZero();
	}

}
