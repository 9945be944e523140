package io.ductor.effect;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;

import javax.sql.DataSource;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import io.ductor.Concurrently;
import io.ductor.effect.internal.EffectDrainer;
import io.ductor.test.PostgresExtension;
import io.ductor.test.TestDatabase;
import io.ductor.test.TestDatabases;
import io.ductor.worker.internal.PeriodicWorker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** The drainer under load, with order, several instances, shutdown and retention. */
class EffectDrainingTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	private static final String[] FAST = { "ductor.effects.drainer.poll-interval=100ms",
			"ductor.effects.backoff.initial=20ms", "ductor.effects.backoff.max=100ms",
			"ductor.effects.reconciler.interval=1h", "ductor.retention.interval=1h" };

	@Test
	void aCommitWakesTheDrainerWithoutWaitingForAPoll() {
		try (ConfigurableApplicationContext context = EffectInstances.start(postgres.database(),
				TestEffects.Config.class, "ductor.effects.drainer.poll-interval=1h")) {
			// let the drainer's first claim (at start) pass, so only a wake-up can
			// dispatch what follows
			DrainerSignals.awaitFirstClaim(context.getBean(EffectDrainer.class));
			String order = UUID.randomUUID().toString();
			tx(context).executeWithoutResult((status) -> context.getBean(TestEffects.class).ship(order, List.of()));
			EffectOperations operations = context.getBean(EffectOperations.class);
			await().atMost(Duration.ofSeconds(10))
				.until(() -> operations.findByKey("ship:" + order).orElseThrow().status() == EffectStatus.COMPLETED);
		}
	}

	@Test
	void anOutcomeRecordedAsksForNoClaimWhenNothingWaitsForIt() {
		try (ConfigurableApplicationContext context = EffectInstances.start(postgres.database(),
				TestEffects.Config.class, "ductor.effects.drainer.poll-interval=1h")) {
			EffectDrainer drainer = context.getBean(EffectDrainer.class);
			DrainerSignals.awaitFirstClaim(drainer);
			EffectOperations operations = context.getBean(EffectOperations.class);
			long rounds = drainer.status().rounds();
			// each dispatched at its commit and recorded in a batch of its own
			for (int i = 0; i < 10; i++) {
				String order = UUID.randomUUID().toString();
				tx(context).executeWithoutResult((status) -> context.getBean(TestEffects.class).ship(order, List.of()));
				await().atMost(Duration.ofSeconds(10))
					.until(() -> operations.findByKey("ship:" + order)
						.orElseThrow()
						.status() == EffectStatus.COMPLETED);
			}
			// a claim would have found nothing: the drainer claims when something may be
			// due
			assertThat(drainer.status().rounds()).isEqualTo(rounds);
		}
	}

	@Test
	void theNextIntentOfAnOrderingKeyIsClaimedWhenTheOneBeforeItSettlesWithoutWaitingForAPoll() {
		try (ConfigurableApplicationContext context = EffectInstances.start(postgres.database(),
				TestEffects.Config.class, "ductor.effects.drainer.poll-interval=1h")) {
			DrainerSignals.awaitFirstClaim(context.getBean(EffectDrainer.class));
			String stream = "stream-" + UUID.randomUUID();
			TestEffects effects = context.getBean(TestEffects.class);
			tx(context).executeWithoutResult((status) -> {
				effects.ordered(stream, 1);
				effects.ordered(stream, 2);
				effects.ordered(stream, 3);
			});
			JdbcClient jdbc = JdbcClient.create(context.getBean(DataSource.class));
			await().atMost(Duration.ofSeconds(10))
				.until(() -> jdbc
					.sql("SELECT count(*) FROM eec_effect_intent WHERE ordering_key = ? AND status = 'completed'")
					.param(stream)
					.query(Long.class)
					.single() == 3);
		}
	}

	@ParameterizedTest(name = "notify-in-transaction={0}")
	@ValueSource(booleans = { false, true })
	void aCommitInOneInstanceWakesTheDrainerOfAnotherThroughNotifyEvenAfterItsConnectionsWereKilled(
			boolean inTransaction) {
		TestDatabase database = TestDatabases.create();
		try (ConfigurableApplicationContext writer = EffectInstances.start(database, TestEffects.Config.class,
				"ductor.effects.drainer.enabled=false",
				"ductor.effects.drainer.notify-in-transaction=" + inTransaction);
				ConfigurableApplicationContext drainer = EffectInstances.start(database, TestEffects.Config.class,
						"ductor.effects.drainer.poll-interval=1h",
						"spring.datasource.hikari.data-source-properties.ApplicationName=drainer-instance")) {
			assertThat(drainer.getBean(EffectDrainer.class).isRunning()).isTrue();
			DrainerSignals.awaitFirstClaim(drainer.getBean(EffectDrainer.class));
			EffectOutbox outbox = writer.getBean(EffectOutbox.class);
			EffectOperations operations = writer.getBean(EffectOperations.class);
			String first = "ship:" + UUID.randomUUID();
			tx(writer).executeWithoutResult(
					(status) -> outbox.schedule(EffectRequest.of("ship", first, List.of()).withKey(first)));
			// well within the drainer's heartbeat (a third of its 30s lease): only a
			// notification wakes it
			await().atMost(Duration.ofSeconds(5))
				.until(() -> operations.findByKey(first).orElseThrow().status() == EffectStatus.COMPLETED);

			// the drainer instance loses every connection, its listener's included
			assertThat(TestDatabases.terminateConnections(database, "drainer-instance")).isPositive();
			String second = "ship:" + UUID.randomUUID();
			tx(writer).executeWithoutResult(
					(status) -> outbox.schedule(EffectRequest.of("ship", second, List.of()).withKey(second)));
			await().atMost(Duration.ofSeconds(8))
				.until(() -> operations.findByKey(second).orElseThrow().status() == EffectStatus.COMPLETED);
		}
		finally {
			TestDatabases.drop(database);
		}
	}

	@Test
	void intentsSharingAnOrderingKeyAreDispatchedOneAtATimeInCommitOrder() throws Exception {
		TestDatabase database = TestDatabases.create();
		try (ConfigurableApplicationContext context = EffectInstances.start(database, TestEffects.Config.class,
				concat(FAST, "ductor.effects.drainer.concurrency=8", "ductor.effects.drainer.batch-size=50"))) {
			TestEffects effects = context.getBean(TestEffects.class);
			TransactionTemplate tx = tx(context);
			AtomicInteger next = new AtomicInteger();
			// 4 producers interleave 1,000 intents over 10 streams; each intent in its
			// own transaction
			Concurrently.run(4, (thread) -> {
				for (int n = next.getAndIncrement(); n < 1000; n = next.getAndIncrement()) {
					int item = n;
					tx.executeWithoutResult((status) -> effects.ordered("stream-" + (item % 10), item));
				}
				return null;
			});
			JdbcClient jdbc = JdbcClient.create(context.getBean(DataSource.class));
			await().atMost(Duration.ofSeconds(60))
				.until(() -> jdbc.sql("SELECT count(*) FROM eec_effect_intent WHERE status = 'completed'")
					.query(Long.class)
					.single() == 1000);
			// per stream, the receiver saw the intents in id order, which is their commit
			// order
			List<Map<String, Object>> calls = jdbc
				.sql("""
						SELECT i.ordering_key, i.id, l.seq FROM test_call_log l JOIN eec_effect_intent i ON i.id = l.intent_id
						ORDER BY l.seq""")
				.query()
				.listOfRows();
			assertThat(calls).hasSize(1000);
			Map<Object, List<Long>> idsByStream = new HashMap<>();
			for (Map<String, Object> call : calls) {
				idsByStream.computeIfAbsent(call.get("ordering_key"), (key) -> new ArrayList<>())
					.add((Long) call.get("id"));
			}
			assertThat(idsByStream).hasSize(10);
			idsByStream.forEach((stream, ids) -> assertThat(ids).as(stream.toString()).hasSize(100).isSorted());
		}
		finally {
			TestDatabases.drop(database);
		}
	}

	@Test
	void aParkedHeadBlocksItsOrderingKeyOnlyUntilAnOperatorActs() {
		TestDatabase database = TestDatabases.create();
		try (ConfigurableApplicationContext context = EffectInstances.start(database, TestEffects.Config.class, FAST)) {
			JdbcClient jdbc = JdbcClient.create(context.getBean(DataSource.class));
			EffectOperations operations = context.getBean(EffectOperations.class);
			// the head of stream "blocked" is an intent whose effect fails for good
			jdbc.sql(
					"""
							INSERT INTO eec_effect_intent (effect_name, idempotency_key, payload, payload_fingerprint, max_attempts,
							    ordering_key) VALUES ('gone', 'head', '[]', 'f', 1, 'blocked')""")
				.update();
			tx(context).executeWithoutResult((status) -> {
				for (int i = 0; i < 3; i++) {
					context.getBean(TestEffects.class).ordered("blocked", i);
					context.getBean(TestEffects.class).ordered("free", i);
				}
			});
			await().atMost(Duration.ofSeconds(20)).until(() -> count(jdbc, "free", "completed") == 3);
			assertThat(operations.findByKey("head").orElseThrow().status()).isEqualTo(EffectStatus.FAILED);
			DrainerSignals.awaitFreshClaim(context.getBean(EffectDrainer.class));
			assertThat(count(jdbc, "blocked", "pending")).isEqualTo(3);
			operations.cancel(operations.findByKey("head").orElseThrow().id());
			await().atMost(Duration.ofSeconds(20)).until(() -> count(jdbc, "blocked", "completed") == 3);
		}
		finally {
			TestDatabases.drop(database);
		}
	}

	@Test
	void threeInstancesDrainTenThousandIntentsFromEightProducersExactlyOnce() throws Exception {
		TestDatabase database = TestDatabases.create();
		List<ConfigurableApplicationContext> instances = new ArrayList<>();
		try {
			for (int i = 0; i < 3; i++) {
				instances.add(EffectInstances.start(database, TestEffects.Config.class,
						concat(FAST, "spring.datasource.hikari.pool-name=instance-" + i)));
			}
			AtomicInteger next = new AtomicInteger();
			Concurrently.run(8, (thread) -> {
				ConfigurableApplicationContext producer = instances.get(thread % 3);
				TestEffects effects = producer.getBean(TestEffects.class);
				TransactionTemplate tx = tx(producer);
				for (int n = next.getAndIncrement(); n < 10_000; n = next.getAndIncrement()) {
					String order = "bulk-" + n;
					tx.executeWithoutResult((status) -> effects.ship(order, List.of()));
				}
				return null;
			});
			JdbcClient jdbc = JdbcClient.create(instances.get(0).getBean(DataSource.class));
			await().atMost(Duration.ofMinutes(3))
				.until(() -> jdbc.sql("SELECT count(*) FROM eec_effect_intent WHERE status = 'completed'")
					.query(Long.class)
					.single() == 10_000);
			Map<String, Object> totals = jdbc.sql("""
					SELECT (SELECT count(*) FROM eec_effect_intent) AS intents,
					       (SELECT count(*) FROM test_call_log) AS calls,
					       (SELECT count(DISTINCT idempotency_key) FROM test_call_log) AS keys,
					       (SELECT count(*) FROM eec_effect_intent WHERE attempts <> 1) AS retried""")
				.query()
				.singleRow();
			assertThat(totals).containsEntry("intents", 10_000L)
				.containsEntry("calls", 10_000L)
				.containsEntry("keys", 10_000L)
				.containsEntry("retried", 0L);
		}
		finally {
			instances.forEach(ConfigurableApplicationContext::close);
			TestDatabases.drop(database);
		}
	}

	@Test
	void shutdownLetsRunningEffectsFinishAndHandsBackWhatItHadNotStarted() throws Exception {
		TestDatabase database = TestDatabases.create();
		try {
			ConfigurableApplicationContext context = EffectInstances.start(database, TestEffects.Config.class,
					concat(FAST, "ductor.effects.drainer.concurrency=1", "ductor.effects.drainer.batch-size=10"));
			String slow = "slow-" + UUID.randomUUID();
			CountDownLatch gate = new CountDownLatch(1);
			CountDownLatch started = new CountDownLatch(1);
			TestEffects.gates.put(slow, gate);
			TestEffects.started.put(slow, started);
			TestEffects effects = context.getBean(TestEffects.class);
			tx(context).executeWithoutResult((status) -> {
				effects.scripted(slow);
				for (int i = 0; i < 5; i++) {
					effects.notify("queued-" + i);
				}
			});
			started.await();
			JdbcClient jdbc = JdbcClient.create(context.getBean(DataSource.class));
			// stop the drainer as the context's shutdown does, while the slow effect
			// still runs
			Thread stopper = new Thread(context.getBean(EffectDrainer.class)::stop);
			stopper.start();
			DrainerSignals.awaitStopWaitingForEffects(stopper);
			gate.countDown();
			stopper.join();
			Map<String, Object> row = jdbc
				.sql("""
						SELECT count(*) FILTER (WHERE status = 'completed') AS completed,
						       count(*) FILTER (WHERE status = 'pending' AND attempts = 0 AND lease_owner IS NULL) AS handed_back,
						       count(*) FILTER (WHERE status = 'in_flight') AS in_flight
						FROM eec_effect_intent""")
				.query()
				.singleRow();
			assertThat(row).containsEntry("in_flight", 0L);
			assertThat((Long) row.get("completed") + (Long) row.get("handed_back")).isEqualTo(6L);
			assertThat(jdbc.sql("SELECT status FROM eec_effect_intent WHERE idempotency_key = ?")
				.param(slow)
				.query(String.class)
				.single()).isEqualTo("completed");
			assertThat((Long) row.get("handed_back")).isPositive();
			context.close();
		}
		finally {
			TestDatabases.drop(database);
		}
	}

	@Test
	void retentionPurgesOldFinishedIntentsInBatchesAndKeepsWhatNeedsAnOperator() {
		TestDatabase database = TestDatabases.create();
		try (ConfigurableApplicationContext context = EffectInstances.start(database, TestEffects.Config.class,
				concat(FAST, "ductor.effects.drainer.enabled=false", "ductor.effects.retention=1d",
						"ductor.retention.batch-size=400"))) {
			JdbcClient jdbc = JdbcClient.create(context.getBean(DataSource.class));
			jdbc.sql(
					"""
							INSERT INTO eec_effect_intent (effect_name, idempotency_key, payload, payload_fingerprint, max_attempts,
							    status, finished_at)
							SELECT 'notify', 'old-' || n, '["x"]', 'f', 1,
							       (ARRAY['completed', 'cancelled', 'failed', 'needs_decision'])[n % 4 + 1],
							       CASE WHEN n % 4 < 3 THEN now() - interval '2 days' END
							FROM generate_series(1, 2000) AS n""")
				.update();
			jdbc.sql(
					"""
							INSERT INTO eec_effect_intent (effect_name, idempotency_key, payload, payload_fingerprint, max_attempts,
							    status, finished_at)
							SELECT 'notify', 'recent-' || n, '["x"]', 'f', 1, 'completed', now() - interval '1 hour'
							FROM generate_series(1, 100) AS n""")
				.update();
			PeriodicWorker retention = context.getBean("ductorRetentionWorker", PeriodicWorker.class);
			int rounds = 0;
			while (retention.runRound()) {
				rounds++;
			}
			assertThat(rounds).isEqualTo(2);
			Map<String, Object> left = jdbc
				.sql("""
						SELECT count(*) FILTER (WHERE idempotency_key LIKE 'recent-%') AS recent,
						       count(*) FILTER (WHERE status IN ('completed', 'cancelled') AND idempotency_key LIKE 'old-%') AS old_done,
						       count(*) FILTER (WHERE status IN ('failed', 'needs_decision')) AS parked
						FROM eec_effect_intent""")
				.query()
				.singleRow();
			assertThat(left).containsEntry("recent", 100L).containsEntry("old_done", 0L).containsEntry("parked", 1000L);
		}
		finally {
			TestDatabases.drop(database);
		}
	}

	private static long count(JdbcClient jdbc, String stream, String status) {
		return jdbc.sql("SELECT count(*) FROM eec_effect_intent WHERE ordering_key = ? AND status = ?")
			.params(stream, status)
			.query(Long.class)
			.single();
	}

	private static TransactionTemplate tx(ConfigurableApplicationContext context) {
		return new TransactionTemplate(context.getBean(PlatformTransactionManager.class));
	}

	private static String[] concat(String[] base, String... more) {
		List<String> all = new ArrayList<>(List.of(base));
		all.addAll(List.of(more));
		return all.toArray(String[]::new);
	}

}
