package io.ductor.effect;

import java.time.Duration;
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

import io.ductor.effect.internal.EffectDrainer;
import io.ductor.test.PostgresExtension;
import io.ductor.test.TestDatabase;
import io.ductor.test.TestDatabases;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A drainer stopped and started again (a context stop and start, a CRaC restore) starts
 * from nothing: it claims again, and nothing the stop left behind can touch the new run's
 * claims.
 */
class DrainerRestartTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	private static final String[] SETTINGS = { "ductor.effects.drainer.poll-interval=100ms",
			"ductor.effects.drainer.concurrency=1", "ductor.effects.drainer.batch-size=10",
			"ductor.effects.reconciler.interval=1h" };

	@Test
	void aDrainerStoppedWithClaimsQueuedAndStartedAgainDrainsEverything() throws Exception {
		TestDatabase database = TestDatabases.create();
		String slow = "slow-" + UUID.randomUUID();
		CountDownLatch gate = new CountDownLatch(1);
		CountDownLatch started = new CountDownLatch(1);
		TestEffects.gates.put(slow, gate);
		TestEffects.started.put(slow, started);
		try (ConfigurableApplicationContext context = EffectInstances.start(database, TestEffects.Config.class,
				SETTINGS)) {
			JdbcClient jdbc = JdbcClient.create(context.getBean(DataSource.class));
			TestEffects effects = context.getBean(TestEffects.class);
			EffectDrainer drainer = context.getBean(EffectDrainer.class);
			tx(context).executeWithoutResult((status) -> {
				effects.scripted(slow);
				for (int i = 0; i < 30; i++) {
					effects.notify("queued-" + i);
				}
			});
			assertThat(started.await(20, TimeUnit.SECONDS)).isTrue();
			// one effect runs and two batches wait behind it: the drainer is full (handed
			// over at the commit, all that fits its concurrency and two batches is in
			// flight; the rest is pending). A claim that checked for room before the
			// transaction reserved its places may take one batch more: a deeper queue,
			// never more than one effect running.
			await().atMost(Duration.ofSeconds(20)).until(() -> count(jdbc, "in_flight") >= 21);
			Thread stopper = new Thread(drainer::stop);
			stopper.start();
			DrainerSignals.awaitStopWaitingForEffects(stopper);
			gate.countDown();
			stopper.join();
			assertThat(count(jdbc, "in_flight")).isZero();
			assertThat(count(jdbc, "pending")).isEqualTo(30);

			drainer.start();
			tx(context).executeWithoutResult((status) -> effects.notify("after the restart"));
			await().atMost(Duration.ofSeconds(30)).until(() -> count(jdbc, "completed") == 32);
			assertThat(context.getBean(RecordingReceiver.class).calls()).isEqualTo(32);
		}
		finally {
			TestEffects.gates.remove(slow);
			TestEffects.started.remove(slow);
			TestDatabases.drop(database);
		}
	}

	@Test
	void aStopAfterARestartNeverHandsBackAnAttemptThatIsRunning() throws Exception {
		TestDatabase database = TestDatabases.create();
		String slow = "slow-" + UUID.randomUUID();
		String mail = "mail-" + UUID.randomUUID();
		CountDownLatch slowGate = new CountDownLatch(1);
		CountDownLatch slowStarted = new CountDownLatch(1);
		CountDownLatch mailGate = new CountDownLatch(1);
		CountDownLatch mailStarted = new CountDownLatch(1);
		TestEffects.gates.put(slow, slowGate);
		TestEffects.started.put(slow, slowStarted);
		TestEffects.gates.put(mail, mailGate);
		TestEffects.started.put(mail, mailStarted);
		try (ConfigurableApplicationContext context = EffectInstances.start(database, TestEffects.Config.class,
				concat(SETTINGS, "ductor.shutdown-timeout=1s"))) {
			JdbcClient jdbc = JdbcClient.create(context.getBean(DataSource.class));
			TestEffects effects = context.getBean(TestEffects.class);
			EffectDrainer drainer = context.getBean(EffectDrainer.class);
			tx(context).executeWithoutResult((status) -> {
				effects.scripted(slow);
				effects.mail(mail);
			});
			assertThat(slowStarted.await(20, TimeUnit.SECONDS)).isTrue();
			// the first stop lets the slow effect finish and hands the mail back,
			// unstarted
			Thread stopper = new Thread(drainer::stop);
			stopper.start();
			DrainerSignals.awaitStopWaitingForEffects(stopper);
			slowGate.countDown();
			stopper.join();
			assertThat(row(jdbc, mail)).containsEntry("status", "pending").containsEntry("attempts", 0);

			// started again, the drainer claims the mail again and its receiver starts
			drainer.start();
			assertThat(mailStarted.await(20, TimeUnit.SECONDS)).isTrue();
			// the second stop gives up waiting for it at the shutdown deadline and
			// interrupts it: its outcome is not recorded, and the intent must stay this
			// attempt's
			drainer.stop();
			assertThat(row(jdbc, mail)).containsEntry("status", "in_flight").containsEntry("attempts", 1);
			mailGate.countDown();
			RecordingReceiver receiver = context.getBean(RecordingReceiver.class);
			await().atMost(Duration.ofSeconds(20)).until(() -> receiver.calls("mailer") == 1);
			// no drainer may run it again: it waits for its lease, then for a decision
			drainer.start();
			tx(context).executeWithoutResult((status) -> effects.notify("marker"));
			await().atMost(Duration.ofSeconds(20)).until(() -> receiver.calls("notify") == 1);
			assertThat(row(jdbc, mail)).containsEntry("status", "in_flight").containsEntry("attempts", 1);
			assertThat(receiver.calls("mailer")).isOne();
		}
		finally {
			TestEffects.gates.remove(slow);
			TestEffects.started.remove(slow);
			TestEffects.gates.remove(mail);
			TestEffects.started.remove(mail);
			TestDatabases.drop(database);
		}
	}

	private static long count(JdbcClient jdbc, String status) {
		return jdbc.sql("SELECT count(*) FROM eec_effect_intent WHERE status = ?")
			.param(status)
			.query(Long.class)
			.single();
	}

	private static Map<String, Object> row(JdbcClient jdbc, String key) {
		return jdbc.sql("SELECT status, attempts FROM eec_effect_intent WHERE idempotency_key = ?")
			.param(key)
			.query()
			.singleRow();
	}

	private static TransactionTemplate tx(ConfigurableApplicationContext context) {
		return new TransactionTemplate(context.getBean(PlatformTransactionManager.class));
	}

	private static String[] concat(String[] base, String... more) {
		String[] all = new String[base.length + more.length];
		System.arraycopy(base, 0, all, 0, base.length);
		System.arraycopy(more, 0, all, base.length, more.length);
		return all;
	}

}
