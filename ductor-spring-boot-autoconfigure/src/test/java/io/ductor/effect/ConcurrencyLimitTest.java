package io.ductor.effect;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Stream;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariDataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import io.ductor.metrics.internal.DuctorObserver;
import io.ductor.test.PostgresExtension;
import io.ductor.test.TestDatabase;
import io.ductor.test.TestDatabases;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A concurrency limit holds across instances: three drainers of eight threads each never
 * run more than three attempts of an effect limited to three at once, the limited backlog
 * does not hold up other effects, and a crashed holder frees its slot when its lease
 * expires.
 */
class ConcurrencyLimitTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	private static final String[] FAST = { "ductor.effects.drainer.poll-interval=100ms",
			"ductor.effects.drainer.concurrency=8", "ductor.effects.drainer.batch-size=10",
			"ductor.effects.reconciler.interval=1h", "ductor.retention.interval=1h",
			"ductor.effects.alarm-scheduler.enabled=false" };

	@Test
	void threeDrainersOfEightThreadsNeverRunMoreThanTheLimitAndOtherEffectsGoOn() {
		Limited.reset();
		List<ConfigurableApplicationContext> instances = new ArrayList<>();
		try {
			// the first instance records everything before any drainer runs
			instances.add(EffectInstances.start(postgres.database(), Limited.Config.class,
					"ductor.effects.drainer.enabled=false"));
			TransactionTemplate tx = tx(instances.get(0));
			EffectOutbox outbox = instances.get(0).getBean(EffectOutbox.class);
			EffectOperations operations = instances.get(0).getBean(EffectOperations.class);
			tx.executeWithoutResult((status) -> {
				for (int i = 0; i < 30; i++) {
					outbox.schedule(EffectRequest.of("slow", "s" + i).withKey("slow:" + i));
				}
				for (int i = 0; i < 100; i++) {
					outbox.schedule(EffectRequest.of("quick", "q" + i).withKey("quick:" + i));
				}
			});
			for (int i = 0; i < 3; i++) {
				instances.add(EffectInstances.start(postgres.database(), Limited.Config.class, FAST));
			}
			JdbcClient jdbc = JdbcClient.create(postgres.dataSource());
			await().atMost(Duration.ofSeconds(30)).until(() -> Limited.quick.get() == 100);
			int slowDoneWhenQuickDone = Limited.slowDone.get();
			await().atMost(Duration.ofSeconds(60)).until(() -> Limited.slowDone.get() == 30);
			await().atMost(Duration.ofSeconds(10))
				.until(() -> jdbc.sql("SELECT count(*) FROM eec_effect_intent WHERE status = 'completed'")
					.query(Long.class)
					.single() == 130);

			assertThat(Limited.maxOverlap.get()).as("most slow calls at once").isLessThanOrEqualTo(3);
			// the limit is used, not undercut: the drainers together keep all three slots
			// busy
			assertThat(Limited.maxOverlap.get()).isEqualTo(3);
			// 30 slow calls of 400ms, 3 at a time, take 4s at least; the quick ones did
			// not wait for them
			assertThat(slowDoneWhenQuickDone).as("slow calls done when the quick ones were").isLessThan(30);
			assertThat(operations.concurrency()).contains(new EffectConcurrency("slow", 3, 0));
			// every attempt took a slot: no slow intent ran twice
			assertThat(Limited.slowCalls.get()).isEqualTo(30);
		}
		finally {
			instances.forEach(ConfigurableApplicationContext::close);
		}
	}

	@Test
	void aSlotHeldByACrashedInstanceIsFreedWhenItsLeaseExpires() {
		Limited.reset();
		// no reconciler here either: it would redrive the crashed holder once its lease
		// expired
		try (ConfigurableApplicationContext context = EffectInstances.start(postgres.database(), Limited.Config.class,
				"ductor.effects.drainer.enabled=false", "ductor.effects.reconciler.enabled=false")) {
			EffectOutbox outbox = context.getBean(EffectOutbox.class);
			EffectOperations operations = context.getBean(EffectOperations.class);
			TransactionTemplate tx = tx(context);
			tx.executeWithoutResult(
					(status) -> outbox.schedule(EffectRequest.of("single", "crashed").withKey("single:1")));
			long crashed = operations.findByKey("single:1").orElseThrow().id();
			JdbcClient jdbc = JdbcClient.create(postgres.dataSource());
			// what a claim by an instance that then died leaves: the intent in flight
			// under a lease, and its slot
			operations.concurrency();
			jdbc.sql("""
					UPDATE eec_effect_intent SET status = 'in_flight', attempts = 1, lease_owner = 'dead-instance',
					    lease_expires_at = now() + interval '5 seconds' WHERE id = ?""").param(crashed).update();
			jdbc.sql("UPDATE eec_effect_slot SET intent_id = ?, attempt = 1 WHERE effect_name = 'single' AND slot = 1")
				.param(crashed)
				.update();
			tx.executeWithoutResult(
					(status) -> outbox.schedule(EffectRequest.of("single", "next").withKey("single:2")));
			assertThat(operations.concurrency()).contains(new EffectConcurrency("single", 1, 1));
			// no reconciler at all: however slowly this instance starts, only the expired
			// lease frees the slot
			String[] drainerOnly = Stream.concat(Stream.of(FAST), Stream.of("ductor.effects.reconciler.enabled=false"))
				.toArray(String[]::new);
			try (ConfigurableApplicationContext drainer = EffectInstances.start(postgres.database(),
					Limited.Config.class, drainerOnly)) {
				await().atMost(Duration.ofSeconds(15))
					.until(() -> operations.findByKey("single:2").orElseThrow().status() == EffectStatus.COMPLETED);
				// it ran only once the crashed holder's lease had expired
				EffectIntent holder = operations.findByKey("single:1").orElseThrow();
				assertThat(holder.status()).isEqualTo(EffectStatus.IN_FLIGHT);
				assertThat(operations.findByKey("single:2").orElseThrow().updatedAt()).isAfter(holder.leaseExpiresAt());
			}
		}
	}

	/**
	 * A transaction that reschedules the alarm of a running occurrence of an effect
	 * limited to one holds that occurrence's row lock for longer than its lease: the
	 * heartbeat cannot extend it, the lease expires and the slot goes to the next intent.
	 * Once the lock goes, the old holder's lease must stay expired (its loss counted),
	 * never revived beside the new holder's: at no moment are two attempts of the effect
	 * in flight under live leases, and the receiver sees a second call at once only
	 * beside a call whose lease was lost.
	 */
	@Test
	void aSlotFreedByAnExpiredLeaseNeverComesBackToItsOldHolder() throws Exception {
		Gated.reset();
		CountDownLatch holderStarted = Gated.start("holder");
		CountDownLatch nextStarted = Gated.start("next");
		String[] settings = { "ductor.effects.drainer.poll-interval=100ms", "ductor.effects.drainer.lease=2s",
				"ductor.effects.drainer.batch-size=10", "ductor.effects.reconciler.interval=1h",
				"ductor.effects.alarm-scheduler.enabled=false" };
		AtomicBoolean sampling = new AtomicBoolean(true);
		AtomicInteger mostLive = new AtomicInteger();
		TestDatabase database = TestDatabases.create();
		HikariDataSource samples = database.newDataSource(1);
		JdbcClient jdbc = JdbcClient.create(samples);
		// what the table says, every few milliseconds, for the whole test
		Thread sampler = new Thread(() -> {
			while (sampling.get()) {
				int live = jdbc
					.sql("""
							SELECT count(*) FROM eec_effect_intent WHERE effect_name = 'one-at-a-time' AND status = 'in_flight'
							  AND lease_expires_at > clock_timestamp()""")
					.query(Integer.class)
					.single();
				mostLive.accumulateAndGet(live, Math::max);
				LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(2));
			}
		}, "live-lease-sampler");
		try (ConfigurableApplicationContext context = EffectInstances.start(database, Gated.Config.class, settings);
				AutoCloseable release = Gated::releaseAll) {
			sampler.start();
			EffectOutbox outbox = context.getBean(EffectOutbox.class);
			EffectOperations operations = context.getBean(EffectOperations.class);
			Gated.Rounds rounds = context.getBean(Gated.Rounds.class);
			TransactionTemplate tx = tx(context);
			tx.executeWithoutResult((status) -> outbox.scheduleAlarm("slot-holder", Duration.ZERO,
					EffectRequest.of("one-at-a-time", "holder")));
			assertThat(holderStarted.await(20, TimeUnit.SECONDS)).isTrue();
			tx.executeWithoutResult((status) -> outbox.schedule(EffectRequest.of("one-at-a-time", "next")));
			long holder = jdbc.sql("SELECT id FROM eec_effect_intent WHERE alarm_name = 'slot-holder'")
				.query(Long.class)
				.single();

			CountDownLatch rescheduled = new CountDownLatch(1);
			CountDownLatch commit = new CountDownLatch(1);
			CompletableFuture<String> reschedule = CompletableFuture.supplyAsync(() -> tx.execute((status) -> {
				// marks the running occurrence superseded, under its row lock until
				// commit
				String key = outbox.scheduleAlarm("slot-holder", Duration.ofHours(1),
						EffectRequest.of("one-at-a-time", "later"));
				rescheduled.countDown();
				await().atMost(Duration.ofSeconds(30)).until(() -> commit.getCount() == 0);
				return key;
			}));
			assertThat(rescheduled.await(20, TimeUnit.SECONDS)).isTrue();
			// the holder's lease expires under the lock, and the drainer claims a few
			// rounds more
			await().atMost(Duration.ofSeconds(20))
				.until(() -> jdbc.sql("SELECT lease_expires_at < clock_timestamp() FROM eec_effect_intent WHERE id = ?")
					.param(holder)
					.query(Boolean.class)
					.single());
			int claims = rounds.drainer.get();
			await().atMost(Duration.ofSeconds(20)).until(() -> rounds.drainer.get() >= claims + 3);
			commit.countDown();
			reschedule.get(20, TimeUnit.SECONDS);
			// the next intent runs in the freed slot while the holder's call still runs
			assertThat(nextStarted.await(20, TimeUnit.SECONDS)).isTrue();
			int beats = rounds.heartbeat.get();
			await().atMost(Duration.ofSeconds(20)).until(() -> rounds.heartbeat.get() >= beats + 3);

			assertThat(mostLive.get()).as("attempts of the effect limited to one in flight under live leases at once")
				.isLessThanOrEqualTo(1);
			assertThat(rounds.lost.get()).as("leases found lost").isGreaterThanOrEqualTo(1);
			assertThat(Gated.maxOverlap.get()).as("calls at once, beyond those whose lease was lost")
				.isLessThanOrEqualTo(1 + rounds.lost.get());
			assertThat(operations.concurrency()).contains(new EffectConcurrency("one-at-a-time", 1, 1));
			Gated.releaseAll();
			await().atMost(Duration.ofSeconds(20)).until(() -> jdbc.sql("""
					SELECT status FROM eec_effect_intent WHERE effect_name = 'one-at-a-time'
					  AND payload = '["next"]'::jsonb""").query(String.class).single().equals("completed"));
		}
		finally {
			sampling.set(false);
			sampler.join(10_000);
			samples.close();
			TestDatabases.drop(database);
		}
		assertThat(mostLive.get()).as("attempts of the effect limited to one in flight under live leases at once")
			.isLessThanOrEqualTo(1);
	}

	/**
	 * A claimed attempt of a limited effect that waits for a worker while its lease
	 * expires (its instance was paused: no heartbeat reached the database) has lost its
	 * slot, which another attempt may already hold: when a worker finally takes it, its
	 * receiver is not called. The start is fenced by a live lease in the database, as for
	 * a receiver that cannot deduplicate.
	 */
	@Test
	void aClaimWhoseLeaseExpiredBeforeItStartedNeverCallsALimitedReceiver() throws Exception {
		Gated.reset();
		CountDownLatch busy = Gated.start("busy");
		CountDownLatch holderStarted = Gated.start("holder");
		String[] settings = { "ductor.effects.drainer.poll-interval=100ms", "ductor.effects.drainer.lease=60s",
				"ductor.effects.drainer.concurrency=1", "ductor.effects.drainer.batch-size=10",
				"ductor.effects.reconciler.interval=1h", "ductor.effects.alarm-scheduler.enabled=false" };
		TestDatabase database = TestDatabases.create();
		try (ConfigurableApplicationContext context = EffectInstances.start(database, Gated.Config.class, settings);
				AutoCloseable release = Gated::releaseAll) {
			EffectOutbox outbox = context.getBean(EffectOutbox.class);
			EffectOperations operations = context.getBean(EffectOperations.class);
			Gated.Rounds rounds = context.getBean(Gated.Rounds.class);
			TransactionTemplate tx = tx(context);
			JdbcClient jdbc = JdbcClient.create(context.getBean(DataSource.class));
			// the only worker is busy; the limited intent is claimed and waits for it
			tx.executeWithoutResult((status) -> outbox.schedule(EffectRequest.of("unlimited", "busy")));
			assertThat(busy.await(20, TimeUnit.SECONDS)).isTrue();
			tx.executeWithoutResult(
					(status) -> outbox.schedule(EffectRequest.of("one-at-a-time", "holder").withKey("holder")));
			await().atMost(Duration.ofSeconds(20))
				.until(() -> operations.findByKey("holder").orElseThrow().status() == EffectStatus.IN_FLIGHT);
			// what a pause of the instance longer than the lease leaves behind
			jdbc.sql("UPDATE eec_effect_intent SET lease_expires_at = clock_timestamp() - interval '1 second' "
					+ "WHERE idempotency_key = 'holder'")
				.update();
			Gated.releaseAll();
			await().atMost(Duration.ofSeconds(20)).until(() -> rounds.lost.get() >= 1 || holderStarted.getCount() == 0);
			assertThat(holderStarted.getCount()).as("calls of the limited receiver after its lease expired")
				.isEqualTo(1);
			assertThat(rounds.lost.get()).as("leases found lost").isEqualTo(1);
			// left to the reconciler, which puts it back to pending
			assertThat(operations.findByKey("holder").orElseThrow().status()).isEqualTo(EffectStatus.IN_FLIGHT);
		}
		finally {
			TestDatabases.drop(database);
		}
	}

	/**
	 * The docs promise that a limited effect's claim whose lease expired while it waited
	 * for a worker never calls the receiver and that "the reconciler puts it back to
	 * pending". The attempt is known not to have started (it was never marked started),
	 * yet the redrive treats it as an attempt of unknown outcome: on the effect's last
	 * attempt (here its only one) the intent is failed, with "the outcome of that attempt
	 * is unknown", although its receiver was never called.
	 */
	@Test
	void aLimitedClaimWhoseLeaseExpiredBeforeItStartedGoesBackToPendingEvenOnItsLastAttempt() throws Exception {
		Gated.reset();
		CountDownLatch busy = Gated.start("busy");
		CountDownLatch holderStarted = Gated.start("holder");
		String[] settings = { "ductor.effects.drainer.poll-interval=100ms", "ductor.effects.drainer.lease=60s",
				"ductor.effects.drainer.concurrency=1", "ductor.effects.drainer.batch-size=10",
				"ductor.effects.reconciler.interval=1h", "ductor.effects.alarm-scheduler.enabled=false",
				"ductor.effects.overrides.one-at-a-time.max-attempts=1" };
		TestDatabase database = TestDatabases.create();
		try (ConfigurableApplicationContext context = EffectInstances.start(database, Gated.Config.class, settings);
				AutoCloseable release = Gated::releaseAll) {
			EffectOutbox outbox = context.getBean(EffectOutbox.class);
			EffectOperations operations = context.getBean(EffectOperations.class);
			Gated.Rounds rounds = context.getBean(Gated.Rounds.class);
			TransactionTemplate tx = tx(context);
			JdbcClient jdbc = JdbcClient.create(context.getBean(DataSource.class));
			tx.executeWithoutResult((status) -> outbox.schedule(EffectRequest.of("unlimited", "busy")));
			assertThat(busy.await(20, TimeUnit.SECONDS)).isTrue();
			tx.executeWithoutResult(
					(status) -> outbox.schedule(EffectRequest.of("one-at-a-time", "holder").withKey("holder")));
			await().atMost(Duration.ofSeconds(20))
				.until(() -> operations.findByKey("holder").orElseThrow().status() == EffectStatus.IN_FLIGHT);
			jdbc.sql("UPDATE eec_effect_intent SET lease_expires_at = clock_timestamp() - interval '1 second' "
					+ "WHERE idempotency_key = 'holder'")
				.update();
			Gated.releaseAll();
			await().atMost(Duration.ofSeconds(20)).until(() -> rounds.lost.get() >= 1 || holderStarted.getCount() == 0);
			assertThat(holderStarted.getCount()).as("calls of the limited receiver after its lease expired")
				.isEqualTo(1);
			// the reconciler's round
			context.getBean(io.ductor.effect.internal.EffectTestSupport.class).callingThreadDrainer().reconcile();
			EffectIntent holder = operations.findByKey("holder").orElseThrow();
			assertThat(holder.status()).as("status after the redrive (last error: %s)", holder.lastError())
				.isIn(EffectStatus.PENDING, EffectStatus.IN_FLIGHT, EffectStatus.COMPLETED);
		}
		finally {
			TestDatabases.drop(database);
		}
	}

	/**
	 * A limit larger than what one drainer holds (concurrency 2, batches of 5: 12
	 * intents) used to fill every batch with the limited backlog while an unlimited
	 * intent, due all along, waited for all of it. Limited intents never fill a batch
	 * while other intents are due: the unlimited one runs in the first batches.
	 */
	@Test
	void aLimitedBacklogNeverFillsTheBatchWhileAnUnlimitedIntentIsDue() {
		Limited.reset();
		TestDatabase database = TestDatabases.create();
		try (ConfigurableApplicationContext recorder = EffectInstances.start(database, Limited.Config.class,
				"ductor.effects.drainer.enabled=false")) {
			EffectOutbox outbox = recorder.getBean(EffectOutbox.class);
			TransactionTemplate tx = tx(recorder);
			tx.executeWithoutResult((status) -> {
				for (int i = 0; i < 200; i++) {
					outbox.schedule(EffectRequest.of("twenty", "t" + i).withKey("twenty:" + i));
				}
			});
			// due after every limited intent
			tx.executeWithoutResult(
					(status) -> outbox.schedule(EffectRequest.of("quick", "unlimited").withKey("quick:unlimited")));
			try (ConfigurableApplicationContext drainer = EffectInstances.start(database, Limited.Config.class,
					"ductor.effects.drainer.poll-interval=100ms", "ductor.effects.drainer.concurrency=2",
					"ductor.effects.drainer.batch-size=5", "ductor.effects.reconciler.interval=1h",
					"ductor.effects.alarm-scheduler.enabled=false")) {
				await().atMost(Duration.ofSeconds(30)).until(() -> Limited.quick.get() == 1);
				await().atMost(Duration.ofSeconds(60)).until(() -> Limited.twenty.get() == 200);
			}
			assertThat(Limited.twentyBeforeQuick.get()).as("limited calls before the unlimited one").isLessThan(10);
		}
		finally {
			TestDatabases.drop(database);
		}
	}

	/**
	 * An unlimited intent that falls due while a limited backlog keeps the drainer busy
	 * (every freed slot wakes a claim, none of which needs to look for other effects) is
	 * still claimed within about a poll interval, not after the backlog.
	 */
	@Test
	void anUnlimitedIntentThatFallsDueBesideALimitedBacklogIsClaimedWithinAPollInterval() {
		Limited.reset();
		Limited.twentyMillis = 25;
		TestDatabase database = TestDatabases.create();
		try (ConfigurableApplicationContext recorder = EffectInstances.start(database, Limited.Config.class,
				"ductor.effects.drainer.enabled=false", "ductor.effects.reconciler.enabled=false")) {
			EffectOutbox outbox = recorder.getBean(EffectOutbox.class);
			TransactionTemplate tx = tx(recorder);
			tx.executeWithoutResult((status) -> {
				for (int i = 0; i < 200; i++) {
					outbox.schedule(EffectRequest.of("twenty", "t" + i).withKey("twenty:" + i));
				}
			});
			try (ConfigurableApplicationContext drainer = EffectInstances.start(database, Limited.Config.class,
					"ductor.effects.drainer.poll-interval=100ms", "ductor.effects.drainer.concurrency=2",
					"ductor.effects.drainer.batch-size=5", "ductor.effects.reconciler.interval=1h",
					"ductor.effects.alarm-scheduler.enabled=false")) {
				await().atMost(Duration.ofSeconds(30)).until(() -> Limited.twenty.get() >= 10);
				// not due when committed: only a later look for other effects finds it
				tx.executeWithoutResult((status) -> outbox.schedule(
						EffectRequest.of("quick", "later").withKey("quick:later").withDelay(Duration.ofMillis(500))));
				await().atMost(Duration.ofSeconds(30)).until(() -> Limited.quick.get() == 1);
				// 200 calls of 25 ms, two at a time, last 2.5 s at least
				assertThat(Limited.twentyBeforeQuick.get()).as("limited calls before the unlimited one")
					.isLessThan(180);
				await().atMost(Duration.ofSeconds(60)).until(() -> Limited.twenty.get() == 200);
			}
		}
		finally {
			Limited.twentyMillis = 0;
			TestDatabases.drop(database);
		}
	}

	private static TransactionTemplate tx(ConfigurableApplicationContext context) {
		return new TransactionTemplate(context.getBean(PlatformTransactionManager.class));
	}

	public static class Limited {

		static final AtomicInteger running = new AtomicInteger();

		static final AtomicInteger maxOverlap = new AtomicInteger();

		static final AtomicInteger slowDone = new AtomicInteger();

		static final AtomicInteger slowCalls = new AtomicInteger();

		static final AtomicInteger quick = new AtomicInteger();

		static final AtomicInteger twenty = new AtomicInteger();

		/** How long a call of the effect limited to twenty takes, in milliseconds. */
		static volatile int twentyMillis;

		/** Calls of the effect limited to twenty before the first unlimited call. */
		static final AtomicInteger twentyBeforeQuick = new AtomicInteger(-1);

		static void reset() {
			twenty.set(0);
			twentyBeforeQuick.set(-1);
			running.set(0);
			maxOverlap.set(0);
			slowDone.set(0);
			slowCalls.set(0);
			quick.set(0);
		}

		@DurableEffect(name = "slow", maxConcurrency = 3)
		public void slow(String id) throws InterruptedException {
			slowCalls.incrementAndGet();
			int now = running.incrementAndGet();
			maxOverlap.accumulateAndGet(now, Math::max);
			try {
				Thread.sleep(400);
			}
			finally {
				running.decrementAndGet();
				slowDone.incrementAndGet();
			}
		}

		@DurableEffect(name = "quick")
		public void quick(String id) {
			twentyBeforeQuick.compareAndSet(-1, twenty.get());
			quick.incrementAndGet();
		}

		@DurableEffect(name = "twenty", maxConcurrency = 20)
		public void twenty(String id) throws InterruptedException {
			if (twentyMillis > 0) {
				Thread.sleep(twentyMillis);
			}
			twenty.incrementAndGet();
		}

		@DurableEffect(name = "single", maxConcurrency = 1)
		public void single(String id) {
		}

		@Configuration(proxyBeanMethods = false)
		static class Config {

			@Bean
			Limited limited() {
				return new Limited();
			}

		}

	}

	/**
	 * An effect limited to one whose calls wait for the test, and what the drainer
	 * reports.
	 */
	public static class Gated {

		static final Map<String, CountDownLatch> started = new ConcurrentHashMap<>();

		static volatile CountDownLatch open = new CountDownLatch(1);

		static final AtomicInteger running = new AtomicInteger();

		static final AtomicInteger maxOverlap = new AtomicInteger();

		static void reset() {
			started.clear();
			open = new CountDownLatch(1);
			running.set(0);
			maxOverlap.set(0);
		}

		static CountDownLatch start(String id) {
			return started.computeIfAbsent(id, (key) -> new CountDownLatch(1));
		}

		static void releaseAll() {
			open.countDown();
		}

		@DurableEffect(name = "one-at-a-time", maxConcurrency = 1)
		public void call(String id) throws InterruptedException {
			maxOverlap.accumulateAndGet(running.incrementAndGet(), Math::max);
			try {
				CountDownLatch latch = started.get(id);
				if (latch != null) {
					latch.countDown();
				}
				open.await(60, TimeUnit.SECONDS);
			}
			finally {
				running.decrementAndGet();
			}
		}

		/** The same call without a limit: holds a worker until the gate opens. */
		@DurableEffect(name = "unlimited")
		public void unlimited(String id) throws InterruptedException {
			call(id);
		}

		/** Counts the drainer's claim rounds, heartbeats and lost leases. */
		static class Rounds implements DuctorObserver {

			final AtomicInteger drainer = new AtomicInteger();

			final AtomicInteger heartbeat = new AtomicInteger();

			final AtomicInteger lost = new AtomicInteger();

			@Override
			public void workerRound(String worker, boolean success) {
				if (worker.equals("drainer")) {
					this.drainer.incrementAndGet();
				}
				else if (worker.equals("heartbeat") && success) {
					this.heartbeat.incrementAndGet();
				}
			}

			@Override
			public void drainerLeaseLost(int leases) {
				this.lost.addAndGet(leases);
			}

		}

		@Configuration(proxyBeanMethods = false)
		static class Config {

			@Bean
			Gated gated() {
				return new Gated();
			}

			@Bean
			Rounds rounds() {
				return new Rounds();
			}

		}

	}

}
