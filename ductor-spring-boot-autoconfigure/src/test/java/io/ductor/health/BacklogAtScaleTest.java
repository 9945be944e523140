package io.ductor.health;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import com.zaxxer.hikari.HikariDataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.jdbc.core.simple.JdbcClient;

import io.ductor.jdbc.SchemaMode;
import io.ductor.jdbc.internal.DuctorSchema;
import io.ductor.metrics.internal.DuctorBacklog;
import io.ductor.test.PostgresExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * With 1,000,000 completed and 100,000 pending intents, the health and gauge query reads
 * only partial indexes of live rows, bounded by the count limit: its plan never scans the
 * table. (Its database time is printed here and measured in the benchmark, never
 * asserted.)
 */
class BacklogAtScaleTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	static HikariDataSource dataSource;

	static JdbcClient jdbc;

	@BeforeAll
	static void fill() {
		dataSource = postgres.newDataSource(2);
		new DuctorSchema(dataSource, SchemaMode.MIGRATE).afterPropertiesSet();
		jdbc = JdbcClient.create(dataSource);
		jdbc.sql("""
				INSERT INTO eec_effect_intent (effect_name, idempotency_key, payload, payload_fingerprint, max_attempts,
				    status, finished_at, next_attempt_at)
				SELECT 'bulk', 'done-' || n, '[]', 'f', 1, 'completed', now(), now() - interval '1 day'
				FROM generate_series(1, 1000000) AS n""").update();
		jdbc.sql("""
				INSERT INTO eec_effect_intent (effect_name, idempotency_key, payload, payload_fingerprint, max_attempts,
				    next_attempt_at)
				SELECT 'bulk', 'pending-' || n, '[]', 'f', 1, now() - interval '1 minute'
				FROM generate_series(1, 100000) AS n""").update();
		jdbc.sql("VACUUM ANALYZE eec_effect_intent").update();
	}

	@AfterAll
	static void close() {
		dataSource.close();
	}

	@Test
	void theBacklogQueryReadsOnlyPartialIndexesOfLiveRows() {
		String plan = explain(DuctorBacklog.SQL.replace(":cap", "10000"));
		assertThat(plan).doesNotContain("Seq Scan on eec_effect_intent");
		assertThat(plan).contains("eec_effect_intent_due_idx").contains("eec_effect_intent_parked_idx");

		DuctorBacklog.Snapshot snapshot = new DuctorBacklog(dataSource, Duration.ofSeconds(5), 10_000).refresh();
		assertThat(snapshot.pendingEstimated()).isTrue();
		assertThat(snapshot.pendingIntents()).isBetween(90_000L, 110_000L);
		assertThat(snapshot.oldestDueAge()).isGreaterThan(Duration.ofSeconds(30));
		assertThat(snapshot.failed()).isZero();
	}

	private static String explain(String sql) {
		List<String> lines = jdbc.sql("EXPLAIN (ANALYZE, BUFFERS) " + sql).query(String.class).list();
		String plan = String.join("\n", lines);
		System.out.println("Plan at 1,000,000 completed + 100,000 pending intents:\n" + plan);
		return plan;
	}

}
