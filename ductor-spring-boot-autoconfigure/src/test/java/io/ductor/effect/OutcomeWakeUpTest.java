package io.ductor.effect;

import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;

import javax.sql.DataSource;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import io.ductor.effect.internal.EffectDrainer;
import io.ductor.run.TickService;
import io.ductor.test.PostgresExtension;

import static org.awaitility.Awaitility.await;

/**
 * What an outcome recorded by the drainer makes due is claimed at once, without waiting
 * for a poll: the drainers here poll once an hour, so only a wake-up makes progress.
 */
class OutcomeWakeUpTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	@Test
	void aCompensationWaitingForAnOriginalDispatchedAtItsCommitOutsideTheRunIsClaimedWhenTheOriginalSettles() {
		try (ConfigurableApplicationContext context = EffectInstances.start(postgres.database(),
				SagaEffects.Config.class, "ductor.effects.drainer.poll-interval=1h")) {
			DrainerSignals.awaitFirstClaim(context.getBean(EffectDrainer.class));
			TickService ticks = context.getBean(TickService.class);
			SagaEffects saga = context.getBean(SagaEffects.class);
			JdbcClient jdbc = JdbcClient.create(context.getBean(DataSource.class));
			TransactionTemplate tx = new TransactionTemplate(context.getBean(PlatformTransactionManager.class));
			String run = "order-" + UUID.randomUUID();
			CountDownLatch gate = new CountDownLatch(1);
			SagaEffects.gates.put("reserve:" + run, gate);
			try {
				// recorded outside any run, dispatched at its commit, and held in flight
				tx.executeWithoutResult((status) -> saga.reserve(run, "book-1"));
				await().atMost(Duration.ofSeconds(10)).until(() -> "in_flight".equals(status(jdbc, "reserve:" + run)));
				// the run takes the same step (the same key: the intent in flight) and
				// fails:
				// its compensation waits for the original to settle
				ticks.start("order", run, 0);
				ticks.tick(run, "reserve", Integer.class, (state, tick) -> {
					saga.reserve(run, "book-1");
					return state + 1;
				});
				ticks.tick(run, "ship", Integer.class, (state, tick) -> {
					tick.fail("out of stock at shipping");
					return state;
				});
				await().atMost(Duration.ofSeconds(10))
					.until(() -> "pending".equals(status(jdbc, "compensate:reserve:" + run)));
				gate.countDown();
				await().atMost(Duration.ofSeconds(10)).until(() -> "completed".equals(status(jdbc, "reserve:" + run)));
				await().atMost(Duration.ofSeconds(10))
					.until(() -> "completed".equals(status(jdbc, "compensate:reserve:" + run)));
			}
			finally {
				gate.countDown();
				SagaEffects.gates.remove("reserve:" + run);
			}
		}
	}

	private static String status(JdbcClient jdbc, String key) {
		return jdbc.sql("SELECT status FROM eec_effect_intent WHERE idempotency_key = ?")
			.param(key)
			.query(String.class)
			.optional()
			.orElse(null);
	}

}
