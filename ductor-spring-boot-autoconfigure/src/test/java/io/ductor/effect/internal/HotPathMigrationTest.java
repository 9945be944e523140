package io.ductor.effect.internal;

import java.sql.Types;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import com.zaxxer.hikari.HikariDataSource;
import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.Test;

import org.springframework.jdbc.core.namedparam.MapSqlParameterSource;
import org.springframework.jdbc.core.simple.JdbcClient;

import io.ductor.effect.EffectStatus;
import io.ductor.effect.internal.IntentClaims.ClaimedIntent;
import io.ductor.effect.internal.IntentOutcomes.Completion;
import io.ductor.jdbc.internal.DuctorSchema;
import io.ductor.test.TestDatabase;
import io.ductor.test.TestDatabases;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * An upgrade with a backlog: a database at V14 holds intents in every live status (due
 * and delayed pending ones, in-flight ones with an expired and a live lease, one being
 * reconciled, parked ones, one with an ordering key behind another); V15 moves them into
 * the layout of the hot path, and a drainer of the new version then finishes every one
 * that can run, while the parked ones stay parked and are found where the console and the
 * operators look for them.
 */
class HotPathMigrationTest {

	@Test
	void liveIntentsOfAnOlderSchemaAreAllDrainedAfterTheUpgrade() {
		TestDatabase database = TestDatabases.create();
		try (HikariDataSource dataSource = database.newDataSource(4)) {
			flyway(dataSource, "14").migrate();
			JdbcClient jdbc = JdbcClient.create(dataSource);
			insert(jdbc, "due", "pending", null, null, null);
			insert(jdbc, "later", "pending", null, null, "1 second");
			insert(jdbc, "expired", "in_flight", "-1 second", null, null);
			insert(jdbc, "running", "in_flight", "2 seconds", null, null);
			insert(jdbc, "first", "in_flight", "-1 second", "key", null);
			insert(jdbc, "second", "pending", null, "key", null);
			insert(jdbc, "failed", "failed", null, null, null);
			insert(jdbc, "undecided", "needs_decision", null, null, null);
			insert(jdbc, "reconciling", "reconciling", null, null, null);
			insert(jdbc, "done", "completed", null, null, null);

			flyway(dataSource, "latest").migrate();

			assertThat(jdbc
				.sql("SELECT idempotency_key FROM eec_effect_intent WHERE queue_status IN ('failed', "
						+ "'needs_decision') ORDER BY idempotency_key")
				.query(String.class)
				.list()).containsExactly("mig-failed", "mig-undecided");
			assertThat(jdbc.sql("SELECT count(*) FROM eec_effect_intent WHERE queue_status = 'reconciling'")
				.query(Long.class)
				.single()).isOne();
			IntentClaims claims = new IntentClaims(dataSource);
			IntentOutcomes outcomes = new IntentOutcomes(dataSource);
			IntentRedrive redrive = new IntentRedrive(dataSource);
			List<String> completed = new ArrayList<>();
			// a drainer's rounds, until the delayed intent and the running one's lease
			// are due
			await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200)).until(() -> {
				redrive.redriveExpired(100, List.of(), List.of());
				List<ClaimedIntent> claimed = claims.claim("new-drainer", Duration.ofMinutes(1), 100);
				for (Settled settled : outcomes.complete("new-drainer",
						claimed.stream()
							.map((c) -> new Completion(c.id(), c.attempt(), EffectStatus.COMPLETED, null, null))
							.toList())) {
					completed.add(settled.key());
				}
				return completed.size() >= 6;
			});
			assertThat(completed).containsExactlyInAnyOrder("mig-due", "mig-later", "mig-expired", "mig-running",
					"mig-first", "mig-second");
			assertThat(completed.indexOf("mig-first")).isLessThan(completed.indexOf("mig-second"));
		}
		finally {
			TestDatabases.drop(database);
		}
	}

	private static Flyway flyway(HikariDataSource dataSource, String target) {
		return Flyway.configure()
			.dataSource(dataSource)
			.locations(DuctorSchema.LOCATION)
			.table(DuctorSchema.HISTORY_TABLE)
			.target(target)
			.load();
	}

	private static void insert(JdbcClient jdbc, String name, String status, String lease, String orderingKey,
			String delay) {
		jdbc.sql("""
				INSERT INTO eec_effect_intent (effect_name, idempotency_key, payload, payload_fingerprint, max_attempts,
				    status, attempts, lease_owner, lease_expires_at, ordering_key, next_attempt_at, finished_at)
				VALUES ('migrated', :key, '[]', 'f', 3, :status, CASE WHEN :status = 'pending' THEN 0 ELSE 1 END,
				    CASE WHEN :status = 'in_flight' THEN 'old-drainer' END,
				    CASE WHEN :status = 'in_flight' THEN now() + CAST(:lease AS interval) END,
				    :orderingKey, now() + COALESCE(CAST(:delay AS interval), interval '0'),
				    CASE WHEN :status IN ('completed', 'failed') THEN now() END)""")
			.paramSource(new MapSqlParameterSource().addValue("key", "mig-" + name)
				.addValue("status", status)
				.addValue("lease", lease, Types.VARCHAR)
				.addValue("orderingKey", orderingKey, Types.VARCHAR)
				.addValue("delay", delay, Types.VARCHAR))
			.update();
	}

}
