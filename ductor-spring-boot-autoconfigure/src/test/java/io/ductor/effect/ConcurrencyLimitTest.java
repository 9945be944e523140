package io.ductor.effect;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import io.ductor.test.PostgresExtension;

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
			assertThat(outbox.concurrency()).contains(new EffectConcurrency("slow", 3, 0));
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
		try (ConfigurableApplicationContext context = EffectInstances.start(postgres.database(), Limited.Config.class,
				"ductor.effects.drainer.enabled=false")) {
			EffectOutbox outbox = context.getBean(EffectOutbox.class);
			TransactionTemplate tx = tx(context);
			tx.executeWithoutResult(
					(status) -> outbox.schedule(EffectRequest.of("single", "crashed").withKey("single:1")));
			long crashed = outbox.findByKey("single:1").orElseThrow().id();
			JdbcClient jdbc = JdbcClient.create(postgres.dataSource());
			// what a claim by an instance that then died leaves: the intent in flight
			// under a lease, and its slot
			outbox.concurrency();
			jdbc.sql("""
					UPDATE eec_effect_intent SET status = 'in_flight', attempts = 1, lease_owner = 'dead-instance',
					    lease_expires_at = now() + interval '5 seconds' WHERE id = ?""").param(crashed).update();
			jdbc.sql("UPDATE eec_effect_slot SET intent_id = ?, attempt = 1 WHERE effect_name = 'single' AND slot = 1")
				.param(crashed)
				.update();
			tx.executeWithoutResult(
					(status) -> outbox.schedule(EffectRequest.of("single", "next").withKey("single:2")));
			assertThat(outbox.concurrency()).contains(new EffectConcurrency("single", 1, 1));
			// no reconciler at all: however slowly this instance starts, only the expired
			// lease frees the slot
			String[] drainerOnly = Stream.concat(Stream.of(FAST), Stream.of("ductor.effects.reconciler.enabled=false"))
				.toArray(String[]::new);
			try (ConfigurableApplicationContext drainer = EffectInstances.start(postgres.database(),
					Limited.Config.class, drainerOnly)) {
				await().atMost(Duration.ofSeconds(15))
					.until(() -> outbox.findByKey("single:2").orElseThrow().status() == EffectStatus.COMPLETED);
				// it ran only once the crashed holder's lease had expired
				EffectIntent holder = outbox.findByKey("single:1").orElseThrow();
				assertThat(holder.status()).isEqualTo(EffectStatus.IN_FLIGHT);
				assertThat(outbox.findByKey("single:2").orElseThrow().updatedAt()).isAfter(holder.leaseExpiresAt());
			}
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

		static void reset() {
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
			quick.incrementAndGet();
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

}
