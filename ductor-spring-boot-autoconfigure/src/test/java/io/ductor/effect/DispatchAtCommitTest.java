package io.ductor.effect;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;

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

import io.ductor.effect.internal.EffectDrainer;
import io.ductor.run.TickService;
import io.ductor.test.PostgresExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * An intent due at commit is recorded already claimed by the instance that records it and
 * runs right after the commit, with no claim; everything that must not run that way (a
 * rollback, a savepoint rolled back, a full drainer, ordering keys, delays, alarms,
 * another instance with the switch off) is recorded and claimed as before.
 */
class DispatchAtCommitTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	static ConfigurableApplicationContext context;

	static TestEffects effects;

	static EffectOutbox outbox;

	static RecordingReceiver receiver;

	static TransactionTemplate tx;

	static JdbcClient jdbc;

	static EffectDrainer drainer;

	@BeforeAll
	static void start() {
		// one worker and batches of one: room for three intents, so saturation is easy to
		// reach
		context = EffectInstances.start(postgres.database(), TestEffects.Config.class,
				"ductor.effects.drainer.concurrency=1", "ductor.effects.drainer.batch-size=1",
				"ductor.effects.drainer.poll-interval=200ms", "ductor.effects.reconciler.interval=1h",
				"ductor.retention.interval=1h");
		effects = context.getBean(TestEffects.class);
		outbox = context.getBean(EffectOutbox.class);
		receiver = context.getBean(RecordingReceiver.class);
		tx = new TransactionTemplate(context.getBean(PlatformTransactionManager.class));
		jdbc = JdbcClient.create(context.getBean(DataSource.class));
		drainer = context.getBean(EffectDrainer.class);
	}

	@AfterAll
	static void stop() {
		context.close();
	}

	static Map<String, Object> row(JdbcClient jdbc, String key) {
		return jdbc.sql("""
				SELECT status, attempts, lease_owner, lease_expires_at > clock_timestamp() AS leased,
				       attempt_started_at IS NOT NULL AS started
				FROM eec_effect_intent WHERE idempotency_key = ?""").param(key).query().singleRow();
	}

	static long intents(String key) {
		return jdbc.sql("SELECT count(*) FROM eec_effect_intent WHERE idempotency_key = ?")
			.param(key)
			.query(Long.class)
			.single();
	}

	static long calls(String key) {
		return jdbc.sql("SELECT count(*) FROM test_call_log WHERE idempotency_key = ?")
			.param(key)
			.query(Long.class)
			.single();
	}

	static void awaitCompleted(String key) {
		await().atMost(Duration.ofSeconds(20)).until(() -> "completed".equals(row(jdbc, key).get("status")));
	}

	static String key(String prefix) {
		return prefix + "-" + UUID.randomUUID();
	}

	@Test
	void aDueIntentIsRecordedClaimedByThisInstanceAndRunsRightAfterTheCommit() {
		String key = key("direct");
		Map<String, Object> recorded = tx.execute((status) -> {
			effects.scripted(key);
			return row(jdbc, key);
		});

		assertThat(recorded).containsEntry("status", "in_flight")
			.containsEntry("attempts", 1)
			.containsEntry("lease_owner", drainer.owner())
			.containsEntry("leased", true);
		awaitCompleted(key);
		assertThat(row(jdbc, key)).containsEntry("attempts", 1).containsEntry("lease_owner", null);
		assertThat(calls(key)).isOne();
	}

	@Test
	void aRolledBackTransactionRecordsAndCallsNothingAndGivesItsPlaceBack() throws Exception {
		List<String> rolledBack = new ArrayList<>();
		for (int i = 0; i < 5; i++) {
			String key = key("rolled-back");
			rolledBack.add(key);
			tx.executeWithoutResult((status) -> {
				effects.scripted(key);
				status.setRollbackOnly();
			});
		}
		// five places were reserved and given back: with room for three, the next is
		// still handed over
		String key = key("after-rollbacks");
		Object status = tx.execute((transaction) -> {
			effects.scripted(key);
			return row(jdbc, key).get("status");
		});
		assertThat(status).isEqualTo("in_flight");
		awaitCompleted(key);
		DrainerSignals.settleAndRestart(drainer);
		for (String gone : rolledBack) {
			assertThat(intents(gone)).isZero();
			assertThat(calls(gone)).isZero();
		}
	}

	@Test
	void anIntentRolledBackToASavepointIsNeverCalledAndItsNeighboursStillRun() throws Exception {
		String undone = key("savepoint-undone");
		String kept = key("savepoint-kept");
		TransactionTemplate nested = new TransactionTemplate(context.getBean(PlatformTransactionManager.class));
		nested.setPropagationBehavior(TransactionDefinition.PROPAGATION_NESTED);
		tx.executeWithoutResult((status) -> {
			effects.scripted(kept);
			nested.executeWithoutResult((inner) -> {
				effects.scripted(undone);
				inner.setRollbackOnly();
			});
		});

		awaitCompleted(kept);
		DrainerSignals.settleAndRestart(drainer);
		assertThat(intents(undone)).isZero();
		assertThat(calls(undone)).isZero();
		assertThat(calls(kept)).isOne();
	}

	@Test
	void whenTheDrainerHoldsAllItWouldClaimTheNextIntentIsRecordedPendingForAnyInstance() {
		List<String> held = new ArrayList<>();
		CountDownLatch gate = new CountDownLatch(1);
		try {
			for (int i = 0; i < 3; i++) {
				String key = key("held");
				held.add(key);
				TestEffects.gates.put(key, gate);
				tx.executeWithoutResult((status) -> effects.scripted(key));
			}
			String next = key("saturated");
			Map<String, Object> recorded = tx.execute((status) -> {
				effects.scripted(next);
				return row(jdbc, next);
			});
			assertThat(recorded).containsEntry("status", "pending").containsEntry("lease_owner", null);
			gate.countDown();
			held.forEach(DispatchAtCommitTest::awaitCompleted);
			awaitCompleted(next);
			assertThat(calls(next)).isOne();
		}
		finally {
			gate.countDown();
			held.forEach(TestEffects.gates::remove);
		}
	}

	@Test
	void orderedDelayedAndAlarmIntentsAreRecordedPendingAndClaimedAsBefore() {
		String stream = "stream-" + UUID.randomUUID();
		String delayed = key("delayed");
		String alarm = "alarm-" + UUID.randomUUID();
		List<Object> statuses = tx.execute((status) -> {
			effects.ordered(stream, 1);
			effects.later(delayed);
			String alarmKey = outbox.scheduleAlarm(alarm, Duration.ZERO, EffectRequest.of("notify", "alarm"));
			return List.of(jdbc.sql("SELECT status FROM eec_effect_intent WHERE ordering_key = ?")
				.param(stream)
				.query()
				.singleValue(), row(jdbc, delayed).get("status"), row(jdbc, alarmKey).get("status"));
		});

		assertThat(statuses).containsExactly("pending", "pending", "pending");
		await().atMost(Duration.ofSeconds(20))
			.until(() -> jdbc.sql("SELECT status FROM eec_effect_intent WHERE ordering_key = ?")
				.param(stream)
				.query(String.class)
				.single()
				.equals("completed"));
	}

	@Test
	void anIntentARunsTickRecordsIsRecordedPendingSoThatTheRunFailingStillCancelsIt() {
		TickService ticks = context.getBean(TickService.class);
		String run = "run-" + UUID.randomUUID();
		String key = key("in-a-tick");
		ticks.start("order", run, 0);
		List<Object> seen = new ArrayList<>();
		ticks.tick(run, "place", Integer.class, (state, tick) -> {
			effects.scripted(key);
			seen.add(row(jdbc, key).get("status"));
			return state + 1;
		});

		assertThat(seen).containsExactly("pending");
		awaitCompleted(key);
		assertThat(calls(key)).isOne();
	}

	@Test
	void aReceiverThatCannotDeduplicateIsMarkedStartedBeforeItIsCalled() {
		String key = key("mail");
		Map<String, Object> recorded = tx.execute((status) -> {
			effects.mail(key);
			return row(jdbc, key);
		});
		assertThat(recorded).containsEntry("status", "in_flight").containsEntry("started", false);

		awaitCompleted(key);
		assertThat(row(jdbc, key)).containsEntry("started", true).containsEntry("attempts", 1);
		assertThat(calls(key)).isOne();
	}

	@Test
	void severalInstancesEachRunWhatTheyRecordAndAnInstanceWithTheSwitchOffRecordsPending() {
		try (ConfigurableApplicationContext other = EffectInstances.start(postgres.database(), TestEffects.Config.class,
				"ductor.effects.drainer.poll-interval=200ms", "ductor.effects.reconciler.interval=1h",
				"ductor.retention.interval=1h");
				ConfigurableApplicationContext off = EffectInstances.start(postgres.database(),
						TestEffects.Config.class, "ductor.effects.drainer.dispatch-at-commit=false",
						"ductor.effects.drainer.poll-interval=200ms", "ductor.effects.reconciler.interval=1h",
						"ductor.retention.interval=1h")) {
			TestEffects otherEffects = other.getBean(TestEffects.class);
			TransactionTemplate otherTx = new TransactionTemplate(other.getBean(PlatformTransactionManager.class));
			String otherOwner = other.getBean(EffectDrainer.class).owner();
			JdbcClient otherJdbc = JdbcClient.create(other.getBean(DataSource.class));
			JdbcClient offJdbc = JdbcClient.create(off.getBean(DataSource.class));
			TestEffects offEffects = off.getBean(TestEffects.class);
			TransactionTemplate offTx = new TransactionTemplate(off.getBean(PlatformTransactionManager.class));
			List<String> keys = new ArrayList<>();
			for (int i = 0; i < 20; i++) {
				String here = key("here");
				String there = key("there");
				keys.add(here);
				keys.add(there);
				tx.executeWithoutResult((status) -> effects.scripted(here));
				Object owner = otherTx.execute((status) -> {
					otherEffects.scripted(there);
					return row(otherJdbc, there).get("lease_owner");
				});
				assertThat(owner).isIn(otherOwner, null);
			}
			String pending = key("switched-off");
			keys.add(pending);
			Object status = offTx.execute((transaction) -> {
				offEffects.scripted(pending);
				return row(offJdbc, pending).get("status");
			});
			assertThat(status).isEqualTo("pending");

			keys.forEach(DispatchAtCommitTest::awaitCompleted);
			for (String key : keys) {
				assertThat(calls(key)).as(key).isOne();
			}
		}
	}

}
