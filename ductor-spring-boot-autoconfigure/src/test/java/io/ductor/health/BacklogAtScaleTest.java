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
import io.ductor.internal.InFlightIntents;
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
		// 10,000 attempts in flight under leases the lease index watches, 5 under leases
		// of the sweep past its watermark, 3 completed whose lease the sweep has not
		// walked yet
		jdbc.sql("""
				INSERT INTO eec_effect_intent (effect_name, idempotency_key, payload, payload_fingerprint, max_attempts,
				    status, attempts, lease_owner, lease_expires_at)
				SELECT 'bulk', 'leased-' || n, '[]', 'f', 1, 'in_flight', 1, 'drainer-' || n % 4,
				    now() + interval '30 seconds'
				FROM generate_series(1, 10000) AS n""").update();
		jdbc.sql("""
				INSERT INTO eec_effect_intent (effect_name, idempotency_key, payload, payload_fingerprint, max_attempts,
				    status, attempts, lease_owner, lease_expires_at, lease_swept, lease_xid)
				SELECT 'bulk', 'swept-' || n, '[]', 'f', 1, CASE WHEN n <= 5 THEN 'in_flight' ELSE 'completed' END, 1,
				    'drainer-1', now() + interval '30 seconds', true, txid_current()
				FROM generate_series(1, 8) AS n""").update();
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
		assertThat(snapshot.inFlight()).as("stops at the count limit").isEqualTo(10_000);
	}

	/**
	 * The in-flight count reads the lease index alone: its condition names only the
	 * generated column, set only for an attempt in flight under a lease the index
	 * watches, so no row is visited (one page per attempt in flight otherwise).
	 */
	@Test
	void theInFlightCountReadsTheLeaseIndexWithoutVisitingRows() {
		long watermark = jdbc.sql(InFlightIntents.SWEEP_WATERMARK_SQL).query(Long.class).single();
		String plan = explain("SELECT " + InFlightIntents.count(watermark).replace(":cap", "100000"));
		// the sweep's few leases past its watermark are read from their rows, the lease
		// index's from the index alone
		assertThat(plan).contains("Index Only Scan using eec_effect_intent_lease_idx")
			.doesNotContain("Bitmap Index Scan on eec_effect_intent_lease_idx")
			.doesNotContain("Seq Scan");
		assertThat(new DuctorBacklog(dataSource, Duration.ofSeconds(5), 100_000).refresh().inFlight())
			.as("in flight: under the lease index's leases, and the sweep's past its watermark")
			.isEqualTo(10_005);
		assertThat(new DuctorBacklog(dataSource, Duration.ofSeconds(5), 100).refresh().inFlight())
			.as("stops at the count limit")
			.isEqualTo(100);
	}

	private static String explain(String sql) {
		List<String> lines = jdbc.sql("EXPLAIN (ANALYZE, BUFFERS) " + sql).query(String.class).list();
		String plan = String.join("\n", lines);
		System.out.println("Plan at 1,000,000 completed + 100,000 pending intents:\n" + plan);
		return plan;
	}

}
