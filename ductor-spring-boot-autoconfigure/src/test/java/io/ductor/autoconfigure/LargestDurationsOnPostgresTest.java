package io.ductor.autoconfigure;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import javax.sql.DataSource;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import io.ductor.effect.DurableEffect;
import io.ductor.effect.EffectContext;
import io.ductor.idempotency.IdempotencyService;
import io.ductor.idempotency.ReserveOutcome;
import io.ductor.idempotency.StoredResponse;
import io.ductor.effect.autoconfigure.DuctorEffectsAutoConfiguration;
import io.ductor.idempotency.autoconfigure.DuctorIdempotencyAutoConfiguration;
import io.ductor.test.PostgresExtension;
import io.ductor.worker.internal.PeriodicWorker;
import io.ductor.worker.internal.RetentionPurger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Every duration property at the largest value start-up accepts (36500d), on a real
 * PostgreSQL: the SQL that adds each duration to {@code now()} or subtracts it runs, so a
 * value that passes start-up can never fail at run time with
 * {@code timestamp out of range}.
 */
class LargestDurationsOnPostgresTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	static ConfigurableApplicationContext context;

	static JdbcClient jdbc;

	@BeforeAll
	static void start() {
		List<String> properties = new ArrayList<>(List.of(postgres.springProperties()));
		// the effect override's durations apply to the effect below (an override of an
		// effect that does not exist fails start-up)
		DuctorPropertiesDurationLimitsTest.durationProperties()
			.forEach((property) -> properties.add(
					property.replace("ductor.effects.overrides.send.", "ductor.effects.overrides.flaky.") + "=36500d"));
		// the recurring alarm whose every and grace are among them runs the effect below
		properties.add("ductor.effects.alarms.send.effect=flaky");
		properties.add("ductor.effects.alarms.send.arguments=alarm-occurrence");
		context = new SpringApplicationBuilder(Infrastructure.class).web(WebApplicationType.NONE)
			.properties(properties.toArray(String[]::new))
			.run();
		jdbc = JdbcClient.create(context.getBean(DataSource.class));
	}

	@AfterAll
	static void stop() {
		context.close();
	}

	@Test
	void aPurgeRoundAtTheLargestRetentionsSucceedsAndDeletesOnlyRowsOlderThanThem() {
		String old = "old-" + UUID.randomUUID();
		String recent = "recent-" + UUID.randomUUID();
		insertFinishedIntent(old, "1900-01-01T00:00:00Z");
		insertFinishedIntent(recent, "2000-01-01T00:00:00Z");
		insertSettledRecord(old, "1900-01-01T00:00:00Z");
		insertSettledRecord(recent, "2000-01-01T00:00:00Z");

		// the round the worker ran at start-up and this one both complete
		PeriodicWorker retention = context.getBean("ductorRetentionWorker", PeriodicWorker.class);
		retention.runRound();
		assertThat(retention.status().lastFailedAt()).as("a purge round failed: %s", retention.status().lastError())
			.isNull();
		for (RetentionPurger purger : context.getBeanProvider(RetentionPurger.class)) {
			assertThat(purger.purge(1000)).isZero();
		}

		assertThat(count("SELECT count(*) FROM eec_effect_intent WHERE idempotency_key = ?", old)).isZero();
		assertThat(count("SELECT count(*) FROM eec_effect_intent WHERE idempotency_key = ?", recent)).isOne();
		assertThat(count("SELECT count(*) FROM eec_routing_idempotency WHERE idempotency_key = ?", old)).isZero();
		assertThat(count("SELECT count(*) FROM eec_routing_idempotency WHERE idempotency_key = ?", recent)).isOne();
	}

	@Test
	void anIdempotencyReserveAndCompleteAtTheLargestTtlsSucceedAndReplay() {
		IdempotencyService service = context.getBean(IdempotencyService.class);
		String key = "k-" + UUID.randomUUID();
		ReserveOutcome first = service.reserve("tenant", "pool", key, "fp");
		assertThat(first).isInstanceOf(ReserveOutcome.Reserved.class);
		assertThat(yearsUntilExpiry(key)).isBetween(99.9, 100.1);

		service.complete(((ReserveOutcome.Reserved) first).reservation(), "decision-1",
				StoredResponse.of(201, "done".getBytes(StandardCharsets.UTF_8)));
		assertThat(yearsUntilExpiry(key)).isBetween(99.9, 100.1);

		ReserveOutcome again = service.reserve("tenant", "pool", key, "fp");
		assertThat(again).isInstanceOf(ReserveOutcome.Replay.class);
		assertThat(((ReserveOutcome.Replay) again).decision().decisionId()).isEqualTo("decision-1");
	}

	@Test
	void anEffectRunsUnderTheLargestLeaseAndRetriesAfterTheLargestBackoff() {
		Effects effects = context.getBean(Effects.class);
		String key = "flaky-" + UUID.randomUUID();
		new TransactionTemplate(context.getBean(PlatformTransactionManager.class))
			.executeWithoutResult((status) -> effects.flaky(key));
		await().atMost(Duration.ofSeconds(20))
			.until(() -> count("SELECT count(*) FROM eec_effect_intent WHERE idempotency_key = ?"
					+ " AND status = 'pending' AND attempts = 1", key) == 1);
		assertThat(Effects.leaseYears).containsKey(key);
		assertThat(Effects.leaseYears.get(key)).isBetween(99.9, 100.1);
		// the jittered retry waits between half and all of the backoff's ceiling
		double retryInYears = jdbc
			.sql("SELECT extract(epoch FROM next_attempt_at - now()) / (365 * 86400)"
					+ " FROM eec_effect_intent WHERE idempotency_key = ?")
			.param(key)
			.query(Double.class)
			.single();
		assertThat(retryInYears).isBetween(49.9, 100.1);
	}

	static void insertFinishedIntent(String key, String finishedAt) {
		jdbc.sql(
				"""
						INSERT INTO eec_effect_intent (effect_name, idempotency_key, payload, payload_fingerprint, status,
						                               attempts, created_at, updated_at, finished_at)
						VALUES ('flaky', ?, '[]'::jsonb, 'fp', 'completed', 1, ?::timestamptz, ?::timestamptz, ?::timestamptz)""")
			.params(key, finishedAt, finishedAt, finishedAt)
			.update();
	}

	static void insertSettledRecord(String key, String at) {
		jdbc.sql("""
				INSERT INTO eec_routing_idempotency (tenant_scope, pool_id, idempotency_key, status,
				                                     request_fingerprint, owner_token, expires_at, created_at,
				                                     updated_at)
				VALUES ('tenant', 'pool', ?, 'completed', 'fp', gen_random_uuid(), ?::timestamptz, ?::timestamptz,
				        ?::timestamptz)""").params(key, at, at, at).update();
	}

	static double yearsUntilExpiry(String key) {
		return jdbc
			.sql("SELECT extract(epoch FROM expires_at - now()) / (365 * 86400) FROM eec_routing_idempotency"
					+ " WHERE idempotency_key = ?")
			.param(key)
			.query(Double.class)
			.single();
	}

	static long count(String sql, Object... params) {
		return jdbc.sql(sql).params(params).query(Long.class).single();
	}

	/** Fails its first attempt, after noting how far ahead its lease reaches. */
	public static class Effects {

		static final Map<String, Double> leaseYears = new java.util.concurrent.ConcurrentHashMap<>();

		private final JdbcClient jdbc;

		public Effects(DataSource dataSource) {
			this.jdbc = JdbcClient.create(dataSource);
		}

		@DurableEffect(name = "flaky", key = "#key")
		public void flaky(String key) {
			leaseYears.put(key, this.jdbc
				.sql("SELECT extract(epoch FROM lease_expires_at - now()) / (365 * 86400) FROM eec_effect_intent"
						+ " WHERE id = ?")
				.param(EffectContext.current().intentId())
				.query(Double.class)
				.single());
			throw new IllegalStateException("first attempt fails");
		}

	}

	@Configuration(proxyBeanMethods = false)
	@ImportAutoConfiguration({ DataSourceAutoConfiguration.class, DataSourceTransactionManagerAutoConfiguration.class,
			TransactionAutoConfiguration.class, JacksonAutoConfiguration.class, DuctorAutoConfiguration.class,
			DuctorEffectsAutoConfiguration.class, DuctorIdempotencyAutoConfiguration.class })
	static class Infrastructure {

		@Bean
		Effects effects(DataSource dataSource) {
			return new Effects(dataSource);
		}

	}

}
