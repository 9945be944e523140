package io.ductor.effect;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

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

import static org.assertj.core.api.Assertions.assertThat;
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
		compensationClaimedWhenItsOriginalOutsideTheRunSettles("order-" + UUID.randomUUID());
	}

	@Test
	void soIsOneWhoseKeyWasDigestedBecauseTheOriginalsKeyIsLongInUtf16UnitsThoughShortInCharacters() {
		// 8 + 91 characters, 190 UTF-16 units: "compensate:reserve:" + it passes 200
		// units,
		// so the compensation's key is the digested form
		String run = UUID.randomUUID().toString().substring(0, 8) + "\uD83D\uDE9A".repeat(91);
		compensationClaimedWhenItsOriginalOutsideTheRunSettles(run);
	}

	private void compensationClaimedWhenItsOriginalOutsideTheRunSettles(String run) {
		try (ConfigurableApplicationContext context = EffectInstances.start(postgres.database(),
				SagaEffects.Config.class, "ductor.effects.drainer.poll-interval=1h")) {
			DrainerSignals.awaitFirstClaim(context.getBean(EffectDrainer.class));
			TickService ticks = context.getBean(TickService.class);
			SagaEffects saga = context.getBean(SagaEffects.class);
			JdbcClient jdbc = JdbcClient.create(context.getBean(DataSource.class));
			TransactionTemplate tx = new TransactionTemplate(context.getBean(PlatformTransactionManager.class));
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
				String compensation = await().atMost(Duration.ofSeconds(10))
					.until(() -> jdbc
						.sql("SELECT idempotency_key FROM eec_effect_intent WHERE compensation_of = "
								+ "(SELECT id FROM eec_effect_intent WHERE idempotency_key = ?)")
						.param("reserve:" + run)
						.query(String.class)
						.optional()
						.orElse(null), Objects::nonNull);
				await().atMost(Duration.ofSeconds(10)).until(() -> "pending".equals(status(jdbc, compensation)));
				gate.countDown();
				await().atMost(Duration.ofSeconds(10)).until(() -> "completed".equals(status(jdbc, "reserve:" + run)));
				await().atMost(Duration.ofSeconds(10)).until(() -> "completed".equals(status(jdbc, compensation)));
			}
			finally {
				gate.countDown();
				SagaEffects.gates.remove("reserve:" + run);
			}
		}
	}

	@Test
	void intentsRecordedPendingBecauseTheDrainerWasFullAreClaimedAsItsRoomFrees() {
		try (ConfigurableApplicationContext context = EffectInstances.start(postgres.database(),
				TestEffects.Config.class, "ductor.effects.drainer.poll-interval=1h",
				"ductor.effects.drainer.concurrency=1", "ductor.effects.drainer.batch-size=1")) {
			DrainerSignals.awaitFirstClaim(context.getBean(EffectDrainer.class));
			TestEffects effects = context.getBean(TestEffects.class);
			JdbcClient jdbc = JdbcClient.create(context.getBean(DataSource.class));
			TransactionTemplate tx = new TransactionTemplate(context.getBean(PlatformTransactionManager.class));
			String prefix = "full-" + UUID.randomUUID() + "-";
			CountDownLatch gate = new CountDownLatch(1);
			List<String> keys = new ArrayList<>();
			for (int i = 0; i < 12; i++) {
				keys.add(prefix + i);
				TestEffects.gates.put(prefix + i, gate);
			}
			try {
				// the first runs and waits, the next two wait in the drainer, the others
				// are recorded pending
				for (String key : keys) {
					tx.executeWithoutResult((status) -> effects.scripted(key));
				}
				await().atMost(Duration.ofSeconds(10))
					.until(() -> count(jdbc, "SELECT count(*) FROM eec_effect_intent WHERE idempotency_key LIKE ? "
							+ "AND status = 'pending'", prefix + "%") > 0);
				gate.countDown();
				await().atMost(Duration.ofSeconds(20))
					.until(() -> count(jdbc, "SELECT count(*) FROM eec_effect_intent WHERE idempotency_key LIKE ? "
							+ "AND status = 'completed'", prefix + "%") == keys.size());
			}
			finally {
				gate.countDown();
				keys.forEach(TestEffects.gates::remove);
			}
		}
	}

	@Test
	void intentsHandedBackAtAStopAreClaimedByTheNextStart() throws Exception {
		try (ConfigurableApplicationContext context = EffectInstances.start(postgres.database(),
				TestEffects.Config.class, "ductor.effects.drainer.poll-interval=1h",
				"ductor.effects.drainer.concurrency=1", "ductor.effects.drainer.batch-size=5")) {
			EffectDrainer drainer = context.getBean(EffectDrainer.class);
			DrainerSignals.awaitFirstClaim(drainer);
			TestEffects effects = context.getBean(TestEffects.class);
			JdbcClient jdbc = JdbcClient.create(context.getBean(DataSource.class));
			TransactionTemplate tx = new TransactionTemplate(context.getBean(PlatformTransactionManager.class));
			String prefix = "back-" + UUID.randomUUID() + "-";
			CountDownLatch gate = new CountDownLatch(1);
			CountDownLatch started = new CountDownLatch(1);
			TestEffects.gates.put(prefix + 0, gate);
			TestEffects.started.put(prefix + 0, started);
			try {
				for (int i = 0; i < 5; i++) {
					String key = prefix + i;
					tx.executeWithoutResult((status) -> effects.scripted(key));
				}
				assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
				Thread stopper = new Thread(drainer::stop);
				stopper.start();
				DrainerSignals.awaitStopWaitingForEffects(stopper);
				gate.countDown();
				stopper.join(20_000);
				assertThat(count(jdbc, "SELECT count(*) FROM eec_effect_intent WHERE idempotency_key LIKE ? "
						+ "AND status = 'pending'", prefix + "%"))
					.isEqualTo(4);
				drainer.start();
				await().atMost(Duration.ofSeconds(10))
					.until(() -> count(jdbc, "SELECT count(*) FROM eec_effect_intent WHERE idempotency_key LIKE ? "
							+ "AND status = 'completed'", prefix + "%") == 5);
			}
			finally {
				gate.countDown();
				TestEffects.gates.remove(prefix + 0);
				TestEffects.started.remove(prefix + 0);
			}
		}
	}

	@Test
	void commitsFromManyThreadsIntoASmallDrainerAllCompleteWithoutAPoll() throws Exception {
		try (ConfigurableApplicationContext context = EffectInstances.start(postgres.database(),
				TestEffects.Config.class, "ductor.effects.drainer.poll-interval=1h",
				"ductor.effects.drainer.concurrency=2", "ductor.effects.drainer.batch-size=2")) {
			DrainerSignals.awaitFirstClaim(context.getBean(EffectDrainer.class));
			TestEffects effects = context.getBean(TestEffects.class);
			JdbcClient jdbc = JdbcClient.create(context.getBean(DataSource.class));
			TransactionTemplate tx = new TransactionTemplate(context.getBean(PlatformTransactionManager.class));
			for (int round = 0; round < 5; round++) {
				String prefix = "many-" + UUID.randomUUID() + "-";
				ExecutorService writers = Executors.newFixedThreadPool(4);
				for (int t = 0; t < 4; t++) {
					int thread = t;
					writers.execute(() -> {
						for (int i = 0; i < 50; i++) {
							String key = prefix + thread + "-" + i;
							tx.executeWithoutResult((status) -> effects.scripted(key));
						}
					});
				}
				writers.shutdown();
				assertThat(writers.awaitTermination(60, TimeUnit.SECONDS)).isTrue();
				await().atMost(Duration.ofSeconds(20))
					.until(() -> count(jdbc, "SELECT count(*) FROM eec_effect_intent WHERE idempotency_key LIKE ? "
							+ "AND status = 'completed'", prefix + "%") == 200);
			}
		}
	}

	private static long count(JdbcClient jdbc, String sql, String param) {
		return jdbc.sql(sql).param(param).query(Long.class).single();
	}

	private static String status(JdbcClient jdbc, String key) {
		return jdbc.sql("SELECT status FROM eec_effect_intent WHERE idempotency_key = ?")
			.param(key)
			.query(String.class)
			.optional()
			.orElse(null);
	}

}
