package io.ductor.effect;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import javax.sql.DataSource;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import io.ductor.effect.internal.IntentClaims;
import io.ductor.test.PostgresExtension;
import io.ductor.test.TestDatabase;
import io.ductor.test.TestDatabases;
import io.ductor.worker.internal.PeriodicWorker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Only an attempt that may have reached a receiver that cannot deduplicate is parked for
 * a decision: claims that never started go back to {@code pending} uncounted, and a claim
 * whose lease was lost before it started never calls its receiver.
 */
class StartedMarkTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	@Test
	void claimsOfACrashedDrainerThatNeverStartedGoBackToPendingUncountedInsteadOfBeingParked() {
		TestDatabase database = TestDatabases.create();
		try (ConfigurableApplicationContext context = EffectInstances.start(database, TestEffects.Config.class,
				"ductor.effects.drainer.enabled=false", "ductor.effects.reconciler.interval=1h")) {
			JdbcClient jdbc = JdbcClient.create(context.getBean(DataSource.class));
			jdbc.sql("""
					INSERT INTO eec_effect_intent (effect_name, idempotency_key, payload, payload_fingerprint, receiver,
					    max_attempts)
					SELECT 'mailer', 'unstarted-' || n, jsonb_build_array('unstarted-' || n), 'f', 'NOT_IDEMPOTENT', 3
					FROM generate_series(1, 10) AS n""").update();
			// a drainer claims the batch and dies before it starts any of it
			IntentClaims claims = new IntentClaims(context.getBean(DataSource.class));
			assertThat(claims.claim("crashed-drainer", Duration.ofSeconds(30), 10)).hasSize(10);
			jdbc.sql("UPDATE eec_effect_intent SET lease_expires_at = now() - interval '1 second'").update();

			context.getBean("ductorReconcilerWorker", PeriodicWorker.class).runRound();

			Map<String, Object> rows = jdbc
				.sql("""
						SELECT count(*) FILTER (WHERE status = 'pending' AND attempts = 0 AND lease_owner IS NULL) AS returned,
						       count(*) FILTER (WHERE status = 'needs_decision') AS parked
						FROM eec_effect_intent""")
				.query()
				.singleRow();
			assertThat(rows).containsEntry("returned", 10L).containsEntry("parked", 0L);
			assertThat(context.getBean(RecordingReceiver.class).calls()).isZero();
		}
		finally {
			TestDatabases.drop(database);
		}
	}

	@Test
	void anAttemptThatStartedIsParkedWhenItsLeaseExpiresAndItsLateOutcomeChangesNothing() throws Exception {
		TestDatabase database = TestDatabases.create();
		String key = "started-" + UUID.randomUUID();
		CountDownLatch gate = new CountDownLatch(1);
		CountDownLatch started = new CountDownLatch(1);
		TestEffects.gates.put(key, gate);
		TestEffects.started.put(key, started);
		try (ConfigurableApplicationContext context = EffectInstances.start(database, TestEffects.Config.class,
				"ductor.effects.drainer.poll-interval=100ms", "ductor.effects.reconciler.interval=1h")) {
			JdbcClient jdbc = JdbcClient.create(context.getBean(DataSource.class));
			tx(context).executeWithoutResult((status) -> context.getBean(TestEffects.class).mail(key));
			assertThat(started.await(20, TimeUnit.SECONDS)).isTrue();
			// the running attempt's lease ends under it (a pause longer than the lease)
			jdbc.sql("UPDATE eec_effect_intent SET lease_expires_at = now() - interval '1 second'").update();
			context.getBean("ductorReconcilerWorker", PeriodicWorker.class).runRound();
			assertThat(status(jdbc, key)).containsEntry("status", "needs_decision").containsEntry("attempts", 1);

			gate.countDown();
			RecordingReceiver receiver = context.getBean(RecordingReceiver.class);
			await().atMost(Duration.ofSeconds(20)).until(() -> receiver.calls("mailer") == 1);
			// the late outcome is fenced off: the decision stays with the operator
			await().atMost(Duration.ofSeconds(20))
				.until(() -> jdbc.sql("SELECT count(*) FROM eec_effect_intent WHERE status = 'in_flight'")
					.query(Long.class)
					.single() == 0);
			assertThat(status(jdbc, key)).containsEntry("status", "needs_decision");
		}
		finally {
			TestEffects.gates.remove(key);
			TestEffects.started.remove(key);
			TestDatabases.drop(database);
		}
	}

	@Test
	void aClaimWhoseLeaseWasLostBeforeItStartedNeverCallsItsReceiver() throws Exception {
		TestDatabase database = TestDatabases.create();
		String blocker = "blocker-" + UUID.randomUUID();
		String queued = "queued-" + UUID.randomUUID();
		String marker = "marker-" + UUID.randomUUID();
		CountDownLatch gate = new CountDownLatch(1);
		CountDownLatch started = new CountDownLatch(1);
		TestEffects.gates.put(blocker, gate);
		TestEffects.started.put(blocker, started);
		try (ConfigurableApplicationContext context = EffectInstances.start(database, TestEffects.Config.class,
				"ductor.effects.drainer.poll-interval=100ms", "ductor.effects.drainer.concurrency=1",
				"ductor.effects.drainer.batch-size=10", "ductor.effects.reconciler.interval=1h")) {
			JdbcClient jdbc = JdbcClient.create(context.getBean(DataSource.class));
			TestEffects effects = context.getBean(TestEffects.class);
			// one transaction, so one claim takes all three; with one worker they run in
			// this order
			tx(context).executeWithoutResult((status) -> {
				effects.mail(blocker);
				effects.mail(queued);
				effects.mail(marker);
			});
			assertThat(started.await(20, TimeUnit.SECONDS)).isTrue();
			assertThat(status(jdbc, queued)).containsEntry("status", "in_flight");
			// while the queued claim waits for the worker, its lease passes to another
			// drainer
			assertThat(jdbc
				.sql("""
						UPDATE eec_effect_intent SET lease_owner = 'another-drainer', lease_expires_at = now() + interval '1 hour'
						WHERE idempotency_key = ?""")
				.param(queued)
				.update()).isOne();
			gate.countDown();

			RecordingReceiver receiver = context.getBean(RecordingReceiver.class);
			EffectOperations operations = context.getBean(EffectOperations.class);
			await().atMost(Duration.ofSeconds(20))
				.until(() -> operations.findByKey(marker).orElseThrow().status() == EffectStatus.COMPLETED);
			List<Object> called = receiver.log("mailer").stream().map((row) -> row.get("idempotency_key")).toList();
			assertThat(called).containsExactly(blocker, marker);
			assertThat(status(jdbc, queued)).containsEntry("status", "in_flight")
				.containsEntry("lease_owner", "another-drainer");
		}
		finally {
			TestEffects.gates.remove(blocker);
			TestEffects.started.remove(blocker);
			TestDatabases.drop(database);
		}
	}

	@Test
	void aClaimRedrivenBeforeItStartedAndClaimedAgainByTheSameDrainerCallsItsReceiverOnce() throws Exception {
		TestDatabase database = TestDatabases.create();
		String blocker = "blocker-" + UUID.randomUUID();
		String queued = "queued-" + UUID.randomUUID();
		CountDownLatch gate = new CountDownLatch(1);
		CountDownLatch started = new CountDownLatch(1);
		TestEffects.gates.put(blocker, gate);
		TestEffects.started.put(blocker, started);
		try (ConfigurableApplicationContext context = EffectInstances.start(database, TestEffects.Config.class,
				"ductor.effects.drainer.poll-interval=100ms", "ductor.effects.drainer.concurrency=1",
				"ductor.effects.drainer.batch-size=10", "ductor.effects.reconciler.interval=1h")) {
			JdbcClient jdbc = JdbcClient.create(context.getBean(DataSource.class));
			TestEffects effects = context.getBean(TestEffects.class);
			tx(context).executeWithoutResult((status) -> {
				effects.mail(blocker);
				effects.mail(queued);
			});
			assertThat(started.await(20, TimeUnit.SECONDS)).isTrue();
			// the queued claim's lease ends before a worker takes it; the reconciler
			// returns it uncounted
			jdbc.sql(
					"UPDATE eec_effect_intent SET lease_expires_at = now() - interval '1 second' WHERE idempotency_key = ?")
				.param(queued)
				.update();
			context.getBean("ductorReconcilerWorker", PeriodicWorker.class).runRound();
			// the same drainer claims it again, with the same attempt number, behind its
			// stale claim
			await().atMost(Duration.ofSeconds(20)).until(() -> "in_flight".equals(status(jdbc, queued).get("status")));
			assertThat(status(jdbc, queued)).containsEntry("attempts", 1);
			gate.countDown();

			EffectOperations operations = context.getBean(EffectOperations.class);
			await().atMost(Duration.ofSeconds(20))
				.until(() -> operations.findByKey(queued).orElseThrow().status() == EffectStatus.COMPLETED);
			assertThat(operations.findByKey(blocker).orElseThrow().status()).isEqualTo(EffectStatus.COMPLETED);
			List<Object> called = context.getBean(RecordingReceiver.class)
				.log("mailer")
				.stream()
				.map((row) -> row.get("idempotency_key"))
				.toList();
			assertThat(called).containsExactly(blocker, queued);
		}
		finally {
			TestEffects.gates.remove(blocker);
			TestEffects.started.remove(blocker);
			TestDatabases.drop(database);
		}
	}

	private static Map<String, Object> status(JdbcClient jdbc, String key) {
		return jdbc.sql("SELECT status, attempts, lease_owner FROM eec_effect_intent WHERE idempotency_key = ?")
			.param(key)
			.query()
			.singleRow();
	}

	private static TransactionTemplate tx(ConfigurableApplicationContext context) {
		return new TransactionTemplate(context.getBean(PlatformTransactionManager.class));
	}

}
