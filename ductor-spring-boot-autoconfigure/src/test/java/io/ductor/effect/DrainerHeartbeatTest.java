package io.ductor.effect;

import java.time.Duration;
import java.time.OffsetDateTime;
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

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The drainer's heartbeat keeps the leases of running effects alive on its own schedule,
 * whatever the claims are doing, and says when it finds a lease lost.
 */
class DrainerHeartbeatTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	private static final String[] SETTINGS = { "ductor.effects.drainer.poll-interval=100ms",
			"ductor.effects.drainer.lease=3s", "ductor.effects.reconciler.interval=200ms" };

	@Test
	void leasesOfRunningEffectsAreExtendedWhileEveryClaimFails() throws Exception {
		TestDatabase database = TestDatabases.create();
		String slow = "slow-" + UUID.randomUUID();
		CountDownLatch gate = new CountDownLatch(1);
		CountDownLatch started = new CountDownLatch(1);
		TestEffects.gates.put(slow, gate);
		TestEffects.started.put(slow, started);
		// every intent is claimed here, so that the claims the test refuses are what it
		// is about
		try (ConfigurableApplicationContext context = EffectInstances.start(database, TestEffects.Config.class,
				java.util.stream.Stream
					.concat(java.util.Arrays.stream(SETTINGS),
							java.util.stream.Stream.of("ductor.effects.drainer.dispatch-at-commit=false"))
					.toArray(String[]::new))) {
			JdbcClient jdbc = JdbcClient.create(context.getBean(DataSource.class));
			TestEffects effects = context.getBean(TestEffects.class);
			tx(context).executeWithoutResult((status) -> effects.scripted(slow));
			assertThat(started.await(20, TimeUnit.SECONDS)).isTrue();
			// from now on every claim fails (as under a statement timeout), the database
			// otherwise answering
			jdbc.sql("""
					CREATE FUNCTION test_refuse_claims() RETURNS trigger LANGUAGE plpgsql AS $$
					BEGIN RAISE EXCEPTION 'claims refused by the test'; END $$""").update();
			jdbc.sql("""
					CREATE TRIGGER test_refuse_claims BEFORE UPDATE ON eec_effect_intent FOR EACH ROW
					WHEN (OLD.status = 'pending' AND NEW.status = 'in_flight') EXECUTE FUNCTION test_refuse_claims()""")
				.update();
			tx(context).executeWithoutResult((status) -> effects.notify("cannot be claimed"));
			EffectDrainer drainer = context.getBean(EffectDrainer.class);
			await().atMost(Duration.ofSeconds(20)).until(() -> drainer.status().lastFailedAt() != null);
			// wait out two whole leases, by the database clock, with the reconciler
			// looking every 200 ms
			OffsetDateTime twoLeases = jdbc.sql("SELECT now() + interval '6 seconds'")
				.query(OffsetDateTime.class)
				.single();
			await().atMost(Duration.ofSeconds(30))
				.until(() -> jdbc.sql("SELECT now() > ?").param(twoLeases).query(Boolean.class).single());

			assertThat(jdbc.sql("""
					SELECT status = 'in_flight' AND lease_expires_at > now() FROM eec_effect_intent
					WHERE idempotency_key = ?""").param(slow).query(Boolean.class).single()).isTrue();
			gate.countDown();
			await().atMost(Duration.ofSeconds(20))
				.until(() -> context.getBean(EffectOperations.class)
					.findByKey(slow)
					.orElseThrow()
					.status() == EffectStatus.COMPLETED);
			assertThat(context.getBean(RecordingReceiver.class).calls("scripted")).isOne();
		}
		finally {
			TestEffects.gates.remove(slow);
			TestEffects.started.remove(slow);
			TestDatabases.drop(database);
		}
	}

	@Test
	void aLeaseFoundLostIsCountedOnceAndTheLateOutcomeIgnored() throws Exception {
		TestDatabase database = TestDatabases.create();
		String slow = "slow-" + UUID.randomUUID();
		String keeper = "keeper-" + UUID.randomUUID();
		CountDownLatch gate = new CountDownLatch(1);
		CountDownLatch keeperGate = new CountDownLatch(1);
		CountDownLatch started = new CountDownLatch(2);
		TestEffects.gates.put(slow, gate);
		TestEffects.started.put(slow, started);
		TestEffects.gates.put(keeper, keeperGate);
		TestEffects.started.put(keeper, started);
		try (ConfigurableApplicationContext context = EffectInstances.start(database, Observed.class,
				"ductor.effects.drainer.poll-interval=100ms", "ductor.effects.drainer.lease=2s",
				"ductor.effects.reconciler.interval=1h")) {
			JdbcClient jdbc = JdbcClient.create(context.getBean(DataSource.class));
			TestEffects effects = context.getBean(TestEffects.class);
			tx(context).executeWithoutResult((status) -> {
				effects.scripted(slow);
				effects.scripted(keeper);
			});
			assertThat(started.await(20, TimeUnit.SECONDS)).isTrue();
			LeaseCounter counter = context.getBean(LeaseCounter.class);
			await().atMost(Duration.ofSeconds(20)).until(() -> counter.heartbeats.get() > 0);
			assertThat(counter.lost).hasValue(0);
			// another drainer holds the slow intent now
			jdbc.sql("UPDATE eec_effect_intent SET lease_owner = 'another-drainer' WHERE idempotency_key = ?")
				.param(slow)
				.update();
			await().atMost(Duration.ofSeconds(20)).until(() -> counter.lost.get() == 1);
			gate.countDown();
			RecordingReceiver receiver = context.getBean(RecordingReceiver.class);
			await().atMost(Duration.ofSeconds(20)).until(() -> receiver.calls("scripted") == 1);
			// the keeper still runs, so the heartbeat goes on: two more rounds count
			// nothing more
			int beats = counter.heartbeats.get();
			await().atMost(Duration.ofSeconds(20)).until(() -> counter.heartbeats.get() >= beats + 2);
			assertThat(counter.lost).hasValue(1);
			assertThat(jdbc.sql("SELECT status || ' ' || lease_owner FROM eec_effect_intent WHERE idempotency_key = ?")
				.param(slow)
				.query(String.class)
				.single()).isEqualTo("in_flight another-drainer");
			keeperGate.countDown();
			await().atMost(Duration.ofSeconds(20))
				.until(() -> context.getBean(EffectOperations.class)
					.findByKey(keeper)
					.orElseThrow()
					.status() == EffectStatus.COMPLETED);
		}
		finally {
			TestEffects.gates.remove(slow);
			TestEffects.started.remove(slow);
			TestEffects.gates.remove(keeper);
			TestEffects.started.remove(keeper);
			TestDatabases.drop(database);
		}
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
