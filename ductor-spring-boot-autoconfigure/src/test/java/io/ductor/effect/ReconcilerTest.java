package io.ductor.effect;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import javax.sql.DataSource;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import io.ductor.effect.internal.ReconcileRounds;
import io.ductor.metrics.autoconfigure.DuctorMetricsAutoConfiguration;
import io.ductor.test.PostgresExtension;
import io.ductor.test.TestDatabase;
import io.ductor.test.TestDatabases;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * An attempt whose outcome is unknown, of an effect with an {@link EffectReconciler}, is
 * settled by asking the reconciler: applied completes it without another call, not
 * applied retries it once with the same key, an answer that never comes (unknown, or a
 * throwing reconciler) parks it after the configured rounds, and a round interrupted by a
 * crash is asked again, never dispatched blindly.
 */
class ReconcilerTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	private static final String[] FAST = { "ductor.effects.drainer.poll-interval=100ms",
			"ductor.effects.reconciler.interval=100ms", "ductor.effects.reconciliation.backoff.initial=50ms",
			"ductor.effects.reconciliation.backoff.max=100ms", "ductor.effects.reconciliation.max-rounds=3",
			"ductor.effects.drainer.lease=1s" };

	private TestDatabase database;

	private ConfigurableApplicationContext context;

	@AfterEach
	void stop() {
		if (this.context != null) {
			this.context.close();
		}
		if (this.database != null) {
			TestDatabases.drop(this.database);
		}
		Mailer.reset();
	}

	@Test
	void appliedCompletesTheIntentWithoutASecondReceiverCall() {
		start();
		Mailer.loseAcknowledgement.add("applied");
		send("applied");
		Map<String, Object> row = awaitStatus("applied", "completed");
		assertThat(Mailer.calls("applied")).containsExactly(1);
		assertThat(Mailer.asked.get("applied")).hasValue(1);
		assertThat(row.get("attempts")).isEqualTo(1);
		assertThat(row.get("reconcile_rounds")).isEqualTo(1);
		assertThat(row.get("reconcile_outcome")).isEqualTo("APPLIED");
		assertThat(row.get("last_error").toString()).startsWith("Reconciled: the receiver applied the attempt")
			.contains("confirmation lost");
		assertThat(row.get("finished_at")).isNotNull();
		MeterRegistry meters = this.context.getBean(MeterRegistry.class);
		assertThat(
				meters.get("ductor.effects.reconciled").tags("effect", "mail", "outcome", "applied").counter().count())
			.isEqualTo(1.0);
		assertThat(this.context.getBean(EffectOperations.class).find(((Number) row.get("id")).longValue()))
			.hasValueSatisfying((intent) -> {
				assertThat(intent.reconcileRounds()).isOne();
				assertThat(intent.reconcileOutcome()).isEqualTo("APPLIED");
			});
	}

	@Test
	void notAppliedRetriesOnceWithTheSameKey() {
		start();
		Mailer.refuseFirst.add("refused");
		send("refused");
		Map<String, Object> row = awaitStatus("refused", "completed");
		// attempt 1 threw before the mail went out, the reconciler found no mail, attempt
		// 2 sent it
		assertThat(Mailer.calls("refused")).containsExactly(1, 2);
		assertThat(Mailer.sent).containsOnlyOnce("refused");
		assertThat(row.get("attempts")).isEqualTo(2);
		assertThat(row.get("reconcile_outcome")).isEqualTo("NOT_APPLIED");
		assertThat(Mailer.asked.get("refused")).hasValue(1);
	}

	@Test
	void unknownForEveryRoundParksTheIntentAfterTheConfiguredRounds() {
		start();
		Mailer.loseAcknowledgement.add("unknown");
		Mailer.script("unknown", ReconcileOutcome.UNKNOWN, ReconcileOutcome.UNKNOWN, ReconcileOutcome.UNKNOWN,
				ReconcileOutcome.APPLIED);
		send("unknown");
		Map<String, Object> row = awaitStatus("unknown", "needs_decision");
		assertThat(Mailer.asked.get("unknown")).hasValue(3);
		assertThat(Mailer.calls("unknown")).containsExactly(1);
		assertThat(row.get("reconcile_rounds")).isEqualTo(3);
		assertThat(row.get("reconcile_outcome")).isEqualTo("UNKNOWN");
		assertThat(row.get("last_error").toString()).contains("not reconciled after 3 round(s)")
			.contains("confirmation lost");
	}

	@Test
	void aThrowingReconcilerIsAskedAgainAndNeverLosesTheIntent() {
		start();
		Mailer.loseAcknowledgement.add("flaky");
		Mailer.script("flaky", new IllegalStateException("sent log unavailable"),
				new IllegalStateException("sent log unavailable"), ReconcileOutcome.APPLIED);
		send("flaky");
		List<String> seen = new CopyOnWriteArrayList<>();
		JdbcClient jdbc = jdbc();
		await().atMost(Duration.ofSeconds(20)).until(() -> {
			String status = jdbc.sql("SELECT status FROM eec_effect_intent WHERE idempotency_key = 'flaky'")
				.query(String.class)
				.single();
			seen.add(status);
			return status.equals("completed");
		});
		assertThat(Set.copyOf(seen)).isSubsetOf("pending", "in_flight", "reconciling", "completed");
		assertThat(Mailer.asked.get("flaky")).hasValue(3);
		assertThat(Mailer.calls("flaky")).containsExactly(1);
		MeterRegistry meters = this.context.getBean(MeterRegistry.class);
		assertThat(
				meters.get("ductor.effects.reconciled").tags("effect", "mail", "outcome", "failed").counter().count())
			.isEqualTo(2.0);
	}

	@Test
	void aRoundInterruptedByACrashIsAskedAgainAfterItsLeaseAndNeverDispatchedBlindly() {
		this.database = TestDatabases.create();
		// what a reconciler killed in its first round leaves: the round counted, its
		// lease still live
		this.context = EffectInstances.start(this.database, Config.class, FAST);
		JdbcClient jdbc = jdbc();
		jdbc.sql(
				"""
						INSERT INTO eec_effect_intent (effect_name, idempotency_key, payload, payload_fingerprint, receiver,
						    max_attempts, status, attempts, attempt_started_at, reconcile_rounds, lease_owner, lease_expires_at,
						    last_error)
						VALUES ('mail', 'crashed-sent', '["crashed-sent"]', 'f', 'NOT_IDEMPOTENT', 5, 'reconciling', 1, now(), 1,
						        'reconciler/dead', now() + interval '2 seconds', 'Outcome unknown after attempt 1'),
						       ('mail', 'crashed-unsent', '["crashed-unsent"]', 'f', 'NOT_IDEMPOTENT', 5, 'reconciling', 1, now(), 1,
						        'reconciler/dead', now() + interval '2 seconds', 'Outcome unknown after attempt 1')""")
			.update();
		Mailer.sent.add("crashed-sent");
		long start = System.nanoTime();
		Map<String, Object> sent = awaitStatus("crashed-sent", "completed");
		Map<String, Object> unsent = awaitStatus("crashed-unsent", "completed");
		// nobody took the round over while its lease was live
		assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThan(Duration.ofMillis(1500));
		// the mail that went out is never sent again; the one that did not is sent once,
		// after the answer
		assertThat(Mailer.calls("crashed-sent")).isEmpty();
		assertThat(Mailer.calls("crashed-unsent")).containsExactly(2);
		assertThat(sent.get("reconcile_rounds")).isEqualTo(2);
		assertThat(unsent.get("reconcile_outcome")).isEqualTo("NOT_APPLIED");
		assertThat(Mailer.asked.get("crashed-sent")).hasValue(1);
	}

	@Test
	void aRoundWhoseLeaseWasLostCannotSettleTheIntent() {
		this.database = TestDatabases.create();
		this.context = EffectInstances.start(this.database, Config.class, "ductor.effects.drainer.poll-interval=100ms",
				"ductor.effects.reconciler.interval=100ms", "ductor.effects.reconciliation.backoff.initial=3s",
				"ductor.effects.reconciliation.backoff.max=3s", "ductor.effects.reconciliation.max-rounds=3",
				"ductor.effects.drainer.lease=1s");
		Mailer.script("fenced", ReconcileOutcome.UNKNOWN);
		JdbcClient jdbc = jdbc();
		// a round claimed by a reconciler that stalled past its lease
		jdbc.sql("""
				INSERT INTO eec_effect_intent (effect_name, idempotency_key, payload, payload_fingerprint, receiver,
				    max_attempts, status, attempts, attempt_started_at, reconcile_rounds, lease_owner, lease_expires_at)
				VALUES ('mail', 'fenced', '["fenced"]', 'f', 'NOT_IDEMPOTENT', 5, 'reconciling', 1, now(), 1,
				        'stalled', now())""").update();
		long id = jdbc.sql("SELECT id FROM eec_effect_intent WHERE idempotency_key = 'fenced'")
			.query(Long.class)
			.single();
		ReconcileRounds.ReconcileClaim stalled = new ReconcileRounds.ReconcileClaim(id, "mail", "fenced",
				"[\"fenced\"]", 1, Receiver.NOT_IDEMPOTENT, null, 1, null, null);
		// the reconciler takes the round over: round 2 answers unknown, round 3 comes
		// seconds later
		await().atMost(Duration.ofSeconds(20))
			.until(() -> "UNKNOWN"
				.equals(jdbc.sql("SELECT COALESCE(reconcile_outcome, '') FROM eec_effect_intent WHERE id = ?")
					.param(id)
					.query(String.class)
					.single()));
		// the stalled round's answer comes late and changes nothing
		ReconcileRounds rounds = new ReconcileRounds(this.context.getBean(DataSource.class));
		assertThat(rounds.settleReconciling("stalled", stalled, "complete", "APPLIED", "late", null)).isEmpty();
		assertThat(jdbc.sql("SELECT status FROM eec_effect_intent WHERE id = ?").param(id).query(String.class).single())
			.isEqualTo("reconciling");
		// round 3 finds no mail in the sent log: sent once, with the same key
		Map<String, Object> row = awaitStatus("fenced", "completed");
		assertThat(row.get("reconcile_rounds")).isEqualTo(3);
		assertThat(row.get("reconcile_outcome")).isEqualTo("NOT_APPLIED");
		assertThat(Mailer.calls("fenced")).containsExactly(2);
	}

	@Test
	void anExpiredLeaseOfAStartedAttemptIsReconciledInsteadOfParked() {
		start();
		JdbcClient jdbc = jdbc();
		// what a drainer killed during the call leaves: the attempt marked started, its
		// lease expired
		jdbc.sql("""
				INSERT INTO eec_effect_intent (effect_name, idempotency_key, payload, payload_fingerprint, receiver,
				    max_attempts, status, attempts, attempt_started_at, lease_owner, lease_expires_at)
				VALUES ('mail', 'killed-sent', '["killed-sent"]', 'f', 'NOT_IDEMPOTENT', 5, 'in_flight', 1, now(),
				        'drainer/dead', now() - interval '1 second'),
				       ('mail', 'killed-unsent', '["killed-unsent"]', 'f', 'NOT_IDEMPOTENT', 5, 'in_flight', 1, now(),
				        'drainer/dead', now() - interval '1 second')""").update();
		Mailer.sent.add("killed-sent");
		Map<String, Object> sent = awaitStatus("killed-sent", "completed");
		Map<String, Object> unsent = awaitStatus("killed-unsent", "completed");
		assertThat(Mailer.calls("killed-sent")).isEmpty();
		assertThat(Mailer.calls("killed-unsent")).containsExactly(2);
		assertThat(sent.get("reconcile_outcome")).isEqualTo("APPLIED");
		assertThat(sent.get("last_error").toString()).contains("Lease of drainer/dead expired during attempt 1");
		assertThat(unsent.get("reconcile_outcome")).isEqualTo("NOT_APPLIED");
	}

	@Test
	void anIdempotentEffectWithAReconcilerIsNotRetriedWhenItsAttemptApplied() {
		start();
		Mailer.loseAcknowledgement.add("charged");
		Mailer mailer = this.context.getBean(Mailer.class);
		new TransactionTemplate(this.context.getBean(PlatformTransactionManager.class))
			.executeWithoutResult((status) -> mailer.charge("charged"));
		Map<String, Object> row = awaitStatus("charged", "completed");
		assertThat(Mailer.calls("charged")).containsExactly(1);
		assertThat(row.get("receiver")).isEqualTo("IDEMPOTENT");
		assertThat(row.get("reconcile_outcome")).isEqualTo("APPLIED");
	}

	@Test
	void anOperatorMayDecideOnAReconcilingIntentWithoutWaiting() {
		this.database = TestDatabases.create();
		this.context = EffectInstances.start(this.database, Config.class, "ductor.effects.drainer.poll-interval=100ms",
				"ductor.effects.reconciler.interval=100ms", "ductor.effects.reconciliation.backoff.initial=1h",
				"ductor.effects.reconciliation.backoff.max=1h");
		Mailer.loseAcknowledgement.add("decided");
		send("decided");
		Map<String, Object> row = awaitStatus("decided", "reconciling");
		EffectOperations operations = this.context.getBean(EffectOperations.class);
		EffectIntent done = operations.resolve(((Number) row.get("id")).longValue(), EffectResolution.MARK_DONE);
		assertThat(done.status()).isEqualTo(EffectStatus.COMPLETED);
		assertThat(done.leaseOwner()).isNull();
		assertThat(Mailer.asked.get("decided")).isNull();
		assertThat(Mailer.calls("decided")).containsExactly(1);
	}

	@Test
	void anEffectWithoutAReconcilerStillWaitsForADecision() {
		start();
		TestEffects.failNext("plain", 1, new IllegalStateException("timed out"));
		TestEffects effects = this.context.getBean(TestEffects.class);
		new TransactionTemplate(this.context.getBean(PlatformTransactionManager.class))
			.executeWithoutResult((status) -> effects.mail("plain"));
		Map<String, Object> row = awaitStatus("plain", "needs_decision");
		assertThat(row.get("reconcile_rounds")).isEqualTo(0);
		assertThat(row.get("reconcile_outcome")).isNull();
	}

	private void start() {
		this.database = TestDatabases.create();
		this.context = EffectInstances.start(this.database, Config.class, FAST);
	}

	private void send(String key) {
		Mailer mailer = this.context.getBean(Mailer.class);
		new TransactionTemplate(this.context.getBean(PlatformTransactionManager.class))
			.executeWithoutResult((status) -> mailer.send(key));
	}

	private JdbcClient jdbc() {
		return JdbcClient.create(this.context.getBean(DataSource.class));
	}

	private Map<String, Object> awaitStatus(String key, String status) {
		JdbcClient jdbc = jdbc();
		await().atMost(Duration.ofSeconds(20))
			.until(() -> status.equals(jdbc.sql("SELECT status FROM eec_effect_intent WHERE idempotency_key = ?")
				.param(key)
				.query(String.class)
				.single()));
		return jdbc.sql("SELECT * FROM eec_effect_intent WHERE idempotency_key = ?").param(key).query().singleRow();
	}

	/** A mail server that cannot deduplicate, with a sent log its reconciler reads. */
	public static class Mailer {

		/**
		 * Keys whose mail goes out and then the acknowledgement is lost (the call
		 * throws).
		 */
		static final Set<String> loseAcknowledgement = ConcurrentHashMap.newKeySet();

		/** Keys whose first call throws before the mail goes out. */
		static final Set<String> refuseFirst = ConcurrentHashMap.newKeySet();

		/** The attempts that reached the receiver, by key. */
		static final Map<String, List<Integer>> calls = new ConcurrentHashMap<>();

		/** The mail server's sent log. */
		static final Set<String> sent = ConcurrentHashMap.newKeySet();

		/** How often the reconciler was asked, by key. */
		static final Map<String, AtomicInteger> asked = new ConcurrentHashMap<>();

		/**
		 * Scripted answers (outcomes, or exceptions to throw), by key; then the sent log
		 * decides.
		 */
		static final Map<String, Deque<Object>> answers = new ConcurrentHashMap<>();

		static void reset() {
			loseAcknowledgement.clear();
			refuseFirst.clear();
			calls.clear();
			sent.clear();
			asked.clear();
			answers.clear();
		}

		static void script(String key, Object... answers) {
			Mailer.answers.put(key, new ArrayDeque<>(List.of(answers)));
		}

		static List<Integer> calls(String key) {
			return calls.getOrDefault(key, List.of());
		}

		@DurableEffect(name = "mail", key = "#key", receiver = Receiver.NOT_IDEMPOTENT)
		public void send(String key) {
			calls.computeIfAbsent(key, (k) -> new CopyOnWriteArrayList<>()).add(EffectContext.current().attempt());
			if (refuseFirst.remove(key)) {
				throw new IllegalStateException("connection reset before the mail was sent");
			}
			sent.add(key);
			if (loseAcknowledgement.remove(key)) {
				throw new IllegalStateException("confirmation lost");
			}
		}

		@DurableEffect(name = "charge", key = "#key")
		public void charge(String key) {
			send(key);
		}

		@EffectReconciler("charge")
		public ReconcileOutcome wasCharged(String key) {
			return wasSent(null, key);
		}

		@EffectReconciler("mail")
		public ReconcileOutcome wasSent(EffectContext context, String key) {
			assertThat((context != null) ? context.idempotencyKey() : key).isEqualTo(key);
			asked.computeIfAbsent(key, (k) -> new AtomicInteger()).incrementAndGet();
			Deque<Object> scripted = answers.get(key);
			Object answer = (scripted != null) ? scripted.poll() : null;
			if (answer instanceof RuntimeException failure) {
				throw failure;
			}
			if (answer != null) {
				return (ReconcileOutcome) answer;
			}
			return sent.contains(key) ? ReconcileOutcome.APPLIED : ReconcileOutcome.NOT_APPLIED;
		}

	}

	@Configuration(proxyBeanMethods = false)
	@ImportAutoConfiguration(DuctorMetricsAutoConfiguration.class)
	static class Config extends TestEffects.Config {

		@Bean
		Mailer mailer() {
			return new Mailer();
		}

		@Bean
		SimpleMeterRegistry meterRegistry() {
			return new SimpleMeterRegistry();
		}

	}

}
