package io.ductor.effect;

import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import javax.sql.DataSource;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import io.ductor.effect.internal.EffectDrainer;
import io.ductor.metrics.internal.DuctorObserver;
import io.ductor.test.PostgresExtension;
import io.ductor.test.TestDatabase;
import io.ductor.test.TestDatabases;
import io.ductor.worker.internal.PeriodicWorker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The heartbeat extends only the attempts its drain session holds, each only while its
 * lease is live: an intent the session dropped, or never got handed, is never kept leased
 * by the beats for the other claims, however busy the drainer stays, so its lease expires
 * and the reconciler redrives it within a lease.
 * <p>
 * Each test keeps a slow effect running (the drainer is busy, and its heartbeat beats for
 * that claim) and runs the reconciler's rounds itself, once the heartbeat has beaten
 * twice after the lease in question should have been left to expire: a heartbeat that
 * revives an expired lease has then done so, whatever the order of the two workers.
 */
class HeartbeatFencingTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	private static final Duration LEASE = Duration.ofSeconds(2);

	private static final String[] SETTINGS = { "ductor.effects.drainer.poll-interval=100ms",
			"ductor.effects.drainer.lease=" + LEASE.toSeconds() + "s", "ductor.effects.reconciler.interval=1h",
			"ductor.effects.alarm-scheduler.enabled=false" };

	/**
	 * The case the docs describe: a transaction open longer than the lease records a call
	 * of a receiver that cannot deduplicate, dispatched at commit. Its lease has expired
	 * by then, so the start mark is refused and the drainer drops the claim without
	 * calling the receiver. The heartbeat must not revive that lease for the slow
	 * effect's sake: the intent goes back to pending uncounted and is mailed once.
	 */
	@Test
	void aMailWhoseStartMarkWasRefusedIsRedrivenAndSentOnceWhileTheDrainerStaysBusy() throws Exception {
		TestDatabase database = TestDatabases.create();
		String keeper = "keeper-" + UUID.randomUUID();
		String mail = "mail-" + UUID.randomUUID();
		CountDownLatch keeperGate = new CountDownLatch(1);
		CountDownLatch keeperStarted = new CountDownLatch(1);
		TestEffects.gates.put(keeper, keeperGate);
		TestEffects.started.put(keeper, keeperStarted);
		// the keeper is released before the context closes, which waits for running
		// effects
		try (ConfigurableApplicationContext context = EffectInstances.start(database, Observed.class, SETTINGS);
				AutoCloseable release = keeperGate::countDown) {
			JdbcClient jdbc = JdbcClient.create(context.getBean(DataSource.class));
			TestEffects effects = context.getBean(TestEffects.class);
			LeaseCounter counter = context.getBean(LeaseCounter.class);
			tx(context).executeWithoutResult((status) -> effects.scripted(keeper));
			assertThat(keeperStarted.await(20, TimeUnit.SECONDS)).isTrue();

			tx(context).executeWithoutResult((status) -> {
				effects.mail(mail);
				// recorded already leased to this instance's drainer, to run at commit
				assertThat(row(jdbc, mail)).containsEntry("status", "in_flight").containsEntry("attempts", 1);
				// held open until its lease has expired by the database clock
				await().pollInSameThread()
					.atMost(Duration.ofSeconds(20))
					.until(() -> jdbc
						.sql("""
								SELECT lease_expires_at < ductor_clock() FROM eec_effect_intent WHERE idempotency_key = ?""")
						.param(mail)
						.query(Boolean.class)
						.single());
			});
			// the commit hands it over; its start mark is refused and the claim dropped
			await().atMost(Duration.ofSeconds(20)).until(() -> counter.lost.get() >= 1);
			awaitBeats(counter, 2);
			Map<String, Object> dropped = row(jdbc, mail);
			assertThat(dropped.get("live")).as("lease of the dropped claim, two beats later: " + dropped)
				.isEqualTo(false);

			RecordingReceiver receiver = context.getBean(RecordingReceiver.class);
			EffectOperations operations = context.getBean(EffectOperations.class);
			PeriodicWorker reconciler = context.getBean("ductorReconcilerWorker", PeriodicWorker.class);
			// the reconciler redrives it, uncounted, and the busy drainer claims and
			// sends
			// it
			await().atMost(LEASE.multipliedBy(5)).until(() -> {
				reconciler.runRound();
				return operations.findByKey(mail).orElseThrow().status() == EffectStatus.COMPLETED;
			});
			assertThat(receiver.calls("mailer")).isOne();
			assertThat(row(jdbc, mail)).containsEntry("attempts", 1);
			keeperGate.countDown();
			await().atMost(Duration.ofSeconds(20))
				.until(() -> operations.findByKey(keeper).orElseThrow().status() == EffectStatus.COMPLETED);
		}
		finally {
			keeperGate.countDown();
			TestEffects.gates.remove(keeper);
			TestEffects.started.remove(keeper);
			TestDatabases.drop(database);
		}
	}

	/**
	 * An intent in flight under the drainer's lease owner that its session does not hold:
	 * what a hand-over that never happened leaves (the transaction's outcome unknown, an
	 * outer transaction rolled back after an inner one committed). Its lease expires
	 * while the drainer beats for its other claim, and the intent is redriven and run.
	 */
	@Test
	void anIntentTheSessionDoesNotHoldIsNotKeptLeasedByTheBeatsForItsOtherClaims() throws Exception {
		TestDatabase database = TestDatabases.create();
		String keeper = "keeper-" + UUID.randomUUID();
		String orphan = "orphan-" + UUID.randomUUID();
		CountDownLatch keeperGate = new CountDownLatch(1);
		CountDownLatch keeperStarted = new CountDownLatch(1);
		TestEffects.gates.put(keeper, keeperGate);
		TestEffects.started.put(keeper, keeperStarted);
		// the keeper is released before the context closes, which waits for running
		// effects
		try (ConfigurableApplicationContext context = EffectInstances.start(database, Observed.class, SETTINGS);
				AutoCloseable release = keeperGate::countDown) {
			JdbcClient jdbc = JdbcClient.create(context.getBean(DataSource.class));
			TestEffects effects = context.getBean(TestEffects.class);
			LeaseCounter counter = context.getBean(LeaseCounter.class);
			tx(context).executeWithoutResult((status) -> effects.scripted(keeper));
			assertThat(keeperStarted.await(20, TimeUnit.SECONDS)).isTrue();
			String owner = context.getBean(EffectDrainer.class).owner();
			// recorded leased to this drainer, as at commit, and never handed to it
			OffsetDateTime expiry = jdbc.sql("""
					INSERT INTO eec_effect_intent (effect_name, idempotency_key, payload, payload_fingerprint,
					    max_attempts, status, attempts, lease_owner, lease_expires_at)
					VALUES ('scripted', ?, jsonb_build_array(?::text), 'f', 3, 'in_flight', 1, ?,
					    ductor_clock() + ? * interval '1 millisecond')
					RETURNING lease_expires_at""")
				.params(orphan, orphan, owner, LEASE.toMillis())
				.query(OffsetDateTime.class)
				.single();
			await().atMost(Duration.ofSeconds(20))
				.until(() -> jdbc.sql("SELECT ductor_clock() > ?").param(expiry).query(Boolean.class).single());
			awaitBeats(counter, 2);
			Map<String, Object> left = row(jdbc, orphan);
			assertThat(left.get("live")).as("lease of the intent not held, two beats after it expired: " + left)
				.isEqualTo(false);

			EffectOperations operations = context.getBean(EffectOperations.class);
			PeriodicWorker reconciler = context.getBean("ductorReconcilerWorker", PeriodicWorker.class);
			await().atMost(LEASE.multipliedBy(5)).until(() -> {
				reconciler.runRound();
				return operations.findByKey(orphan).orElseThrow().status() == EffectStatus.COMPLETED;
			});
			assertThat(context.getBean(RecordingReceiver.class)
				.log("scripted")
				.stream()
				.filter((call) -> orphan.equals(call.get("idempotency_key")))
				.count()).isOne();
			// it was never the session's to lose
			assertThat(counter.lost).hasValue(0);
		}
		finally {
			keeperGate.countDown();
			TestEffects.gates.remove(keeper);
			TestEffects.started.remove(keeper);
			TestDatabases.drop(database);
		}
	}

	private static void awaitBeats(LeaseCounter counter, int beats) {
		int now = counter.heartbeats.get();
		await().atMost(LEASE.multipliedBy(10)).until(() -> counter.heartbeats.get() >= now + beats);
	}

	private static Map<String, Object> row(JdbcClient jdbc, String key) {
		return jdbc.sql("""
				SELECT status, attempts, lease_owner, lease_expires_at > ductor_clock() AS live
				FROM eec_effect_intent WHERE idempotency_key = ?""").param(key).query().singleRow();
	}

	private static TransactionTemplate tx(ConfigurableApplicationContext context) {
		return new TransactionTemplate(context.getBean(PlatformTransactionManager.class));
	}

	/** Counts what the drainer reports about its leases. */
	static class LeaseCounter implements DuctorObserver {

		final AtomicInteger lost = new AtomicInteger();

		final AtomicInteger heartbeats = new AtomicInteger();

		@Override
		public void drainerLeaseLost(int leases) {
			this.lost.addAndGet(leases);
		}

		@Override
		public void workerRound(String worker, boolean success) {
			if (worker.equals("heartbeat") && success) {
				this.heartbeats.incrementAndGet();
			}
		}

	}

	@Configuration(proxyBeanMethods = false)
	@Import(TestEffects.Config.class)
	static class Observed {

		@Bean
		LeaseCounter leaseCounter() {
			return new LeaseCounter();
		}

	}

}
