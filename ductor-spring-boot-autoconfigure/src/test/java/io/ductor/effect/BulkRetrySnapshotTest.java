package io.ductor.effect;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import javax.sql.DataSource;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.simple.JdbcClient;

import io.ductor.test.PostgresExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * One operator bulk retry acts on the intents parked when it starts. Drainers run what it
 * moved while it is still moving the rest; a receiver that cannot deduplicate fails each
 * call with an unknown outcome, which parks the intent again. A later batch of the same
 * call must not move it back: that would call the receiver a second time with no decision
 * in between.
 */
class BulkRetrySnapshotTest {

	static final int PARKED = 20_000;

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	static ConfigurableApplicationContext context;

	static JdbcClient jdbc;

	@BeforeAll
	static void start() {
		context = EffectInstances.start(postgres.database(), Config.class, "ductor.effects.drainer.poll-interval=50ms",
				"ductor.effects.drainer.batch-size=100", "ductor.effects.drainer.concurrency=8",
				"ductor.effects.reconciler.interval=1h", "ductor.retention.interval=1h");
		jdbc = JdbcClient.create(context.getBean(DataSource.class));
	}

	@AfterAll
	static void stop() {
		context.close();
	}

	@Test
	void oneBulkRetryOfParkedIntentsCallsEachReceiverOnceWhileDrainersParkThemAgain() {
		jdbc.sql("""
				INSERT INTO eec_effect_intent (effect_name, idempotency_key, payload, payload_fingerprint, receiver,
				    max_attempts, status, attempts, last_error, updated_at)
				SELECT 'unknownOutcome', 'parked-' || n, '["x"]', 'f', 'NOT_IDEMPOTENT', 1, 'needs_decision', 1,
				    'Outcome unknown', now() - interval '1 minute'
				FROM generate_series(1, ?) AS n""").param(PARKED).update();
		jdbc.sql("ANALYZE eec_effect_intent").update();

		int retried = context.getBean(EffectOperations.class).retryAll("unknownOutcome", EffectStatus.NEEDS_DECISION);

		await().atMost(Duration.ofMinutes(3))
			.pollInterval(Duration.ofMillis(200))
			.until(() -> jdbc.sql("""
					SELECT count(*) FROM eec_effect_intent
					WHERE effect_name = 'unknownOutcome' AND status IN ('pending', 'in_flight')""")
				.query(Long.class)
				.single() == 0);
		assertThat(retried).isEqualTo(PARKED);
		assertThat(UnknownOutcome.calls).hasSize(PARKED);
		assertThat(UnknownOutcome.calls.values()).allSatisfy((calls) -> assertThat(calls.get()).isOne());
		assertThat(jdbc.sql("SELECT count(*) FROM eec_effect_intent WHERE status = 'needs_decision' AND attempts = 2")
			.query(Long.class)
			.single()).isEqualTo(PARKED);
	}

	/**
	 * A receiver that cannot deduplicate, whose every call ends with an unknown outcome.
	 */
	public static class UnknownOutcome {

		static final Map<Long, AtomicInteger> calls = new ConcurrentHashMap<>();

		@DurableEffect(name = "unknownOutcome", receiver = Receiver.NOT_IDEMPOTENT)
		public void send(String to) {
			calls.computeIfAbsent(EffectContext.current().intentId(), (id) -> new AtomicInteger()).incrementAndGet();
			throw new IllegalStateException("socket timeout after the request was sent");
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class Config {

		@Bean
		UnknownOutcome unknownOutcome() {
			return new UnknownOutcome();
		}

	}

}
