package io.ductor.effect;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
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
 * "Graceful shutdown stops claiming, lets running effects finish within
 * {@code ductor.shutdown-timeout} and hands claimed but unstarted intents back"
 * (docs/operations.md): also an intent that a transaction recorded leased to the drainer
 * (dispatch at commit) and that commits while the drainer stops. Left leased to a drainer
 * that is gone, it waited for its lease to expire and the reconciler then counted an
 * attempt whose receiver was never called: on its last attempt, it failed.
 */
class HandOverAtStopTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	TestDatabase database;

	ConfigurableApplicationContext context;

	@BeforeEach
	void start() {
		this.database = TestDatabases.create();
		this.context = EffectInstances.start(this.database, Effects.class, "ductor.effects.max-attempts=1",
				"ductor.effects.reconciler.interval=1h");
	}

	@AfterEach
	void stop() {
		if (this.context != null) {
			this.context.close();
		}
		TestDatabases.drop(this.database);
	}

	@Test
	void anIntentCommittedLeasedToADrainerThatStoppedMeanwhileIsHandedBack() {
		EffectDrainer drainer = this.context.getBean(EffectDrainer.class);
		Mailer mailer = this.context.getBean(Mailer.class);
		new TransactionTemplate(this.context.getBean(PlatformTransactionManager.class))
			.executeWithoutResult((status) -> {
				mailer.send("at-stop");
				// the drainer stops (a context closing, on another thread) before this
				// transaction commits
				CompletableFuture.runAsync(drainer::stop).join();
			});
		assertThat(drainer.isRunning()).isFalse();
		JdbcClient jdbc = JdbcClient.create(this.context.getBean(javax.sql.DataSource.class));
		// handed back on a thread of its own, after the commit
		await().atMost(Duration.ofSeconds(10))
			.untilAsserted(() -> assertThat(
					jdbc.sql("SELECT status, attempts, lease_owner FROM eec_effect_intent WHERE idempotency_key = ?")
						.param("at-stop")
						.query((rs, row) -> rs.getString(1) + "/" + rs.getInt(2) + "/" + rs.getString(3))
						.single())
				.as("status/attempts/lease owner")
				.isEqualTo("pending/0/null"));
		assertThat(Mailer.calls).isZero();
	}

	public static class Mailer {

		static volatile int calls;

		@DurableEffect(name = "handover.mail", key = "#key")
		public void send(String key) {
			calls++;
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class Effects {

		@Bean
		Mailer handOverMailer() {
			return new Mailer();
		}

	}

}
