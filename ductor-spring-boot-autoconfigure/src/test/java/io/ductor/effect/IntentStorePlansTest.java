package io.ductor.effect;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;

import com.zaxxer.hikari.HikariDataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.jdbc.core.simple.JdbcClient;

import io.ductor.effect.internal.AlarmOccurrences;
import io.ductor.effect.internal.DrainerLeases;
import io.ductor.effect.internal.EffectSlots;
import io.ductor.effect.internal.IntentClaims;
import io.ductor.effect.internal.IntentOutcomes;
import io.ductor.effect.internal.IntentRedrive;
import io.ductor.effect.internal.IntentRetention;
import io.ductor.effect.internal.LeaseSweep;
import io.ductor.effect.internal.OperatorMoves;
import io.ductor.jdbc.SchemaMode;
import io.ductor.jdbc.internal.DuctorSchema;
import io.ductor.test.PostgresExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The outbox's batch statements at 1,000,000 finished and 100,000 live intents find their
 * rows through indexes for every batch size a property allows, with the plan the server
 * picks for one call and with the generic plan a prepared statement may settle on. Joined
 * on their batch with {@code IN (subquery)} or {@code FROM cte}, large batches turned
 * into scans of the whole table.
 */
class IntentStorePlansTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	static HikariDataSource dataSource;

	@BeforeAll
	static void fill() {
		dataSource = postgres.newDataSource(2);
		new DuctorSchema(dataSource, SchemaMode.MIGRATE).afterPropertiesSet();
		JdbcClient jdbc = JdbcClient.create(dataSource);
		jdbc.sql(
				"""
						INSERT INTO eec_effect_intent (effect_name, idempotency_key, payload, payload_fingerprint, max_attempts,
						    status, finished_at, next_attempt_at)
						SELECT 'bulk', 'done-' || n, '[]', 'f', 1, 'completed', now() - interval '30 days', now() - interval '30 days'
						FROM generate_series(1, 1000000) AS n""")
			.update();
		jdbc.sql("""
				INSERT INTO eec_effect_intent (effect_name, idempotency_key, payload, payload_fingerprint, max_attempts,
				    next_attempt_at)
				SELECT 'bulk', 'pending-' || n, '[]', 'f', 1, now() - interval '1 minute'
				FROM generate_series(1, 90000) AS n""").update();
		jdbc.sql("""
				INSERT INTO eec_effect_intent (effect_name, idempotency_key, payload, payload_fingerprint, max_attempts,
				    status, attempts, lease_owner, lease_expires_at)
				SELECT 'bulk', 'leased-' || n, '[]', 'f', 3, 'in_flight', 1, 'gone', now() - interval '1 minute'
				FROM generate_series(1, 5000) AS n""").update();
		jdbc.sql("""
				INSERT INTO eec_effect_intent (effect_name, idempotency_key, payload, payload_fingerprint, max_attempts,
				    status, attempts, lease_owner, lease_expires_at)
				SELECT 'bulk', 'running-' || n, '[]', 'f', 3, 'in_flight', 1, 'alive', now() + interval '1 hour'
				FROM generate_series(1, 5000) AS n""").update();
		jdbc.sql("""
				INSERT INTO eec_effect_intent (effect_name, idempotency_key, payload, payload_fingerprint, max_attempts,
				    status, attempts, finished_at)
				SELECT 'bulk', 'failed-' || n, '[]', 'f', 1, 'failed', 1, now() FROM generate_series(1, 5000) AS n""")
			.update();
		jdbc.sql("VACUUM ANALYZE eec_effect_intent").update();
	}

	@AfterAll
	static void close() {
		dataSource.close();
	}

	@ParameterizedTest(name = "batch of {0}")
	@ValueSource(ints = { 1, 100, 1_000, 10_000 })
	void theClaimReadsTheDueIndexAndThePrimaryKey(int batch) throws SQLException {
		String plans = plans(IntentClaims.claimSql(false, batch, false, ""), null, "text, bigint", "'planner', 30000",
				"owner", "leaseMs");
		assertThat(plans).doesNotContain("Seq Scan")
			.contains("eec_effect_intent_due_idx")
			.contains("eec_effect_intent_pkey");
	}

	@ParameterizedTest(name = "batch of {0}")
	@ValueSource(ints = { 1, 100, 1_000, 5_000 })
	void outcomesAreMatchedToTheirIntentsByHashNotByALoopOverEveryInFlightRow(int batch) throws SQLException {
		List<Long> ids = JdbcClient.create(dataSource)
			.sql("SELECT id FROM eec_effect_intent WHERE status = 'in_flight' ORDER BY id LIMIT ?")
			.param(batch)
			.query(Long.class)
			.list();
		String idArray = "'{" + String.join(",", ids.stream().map(String::valueOf).toList()) + "}'";
		String values = idArray + ", array_fill(1, ARRAY[" + batch + "]), array_fill('completed'::text, ARRAY[" + batch
				+ "]), array_fill(NULL::text, ARRAY[" + batch + "]), array_fill(0::bigint, ARRAY[" + batch
				+ "]), array_fill(NULL::text, ARRAY[" + batch + "]), 'gone', " + idArray;
		String plans = plans(IntentOutcomes.COMPLETE_SQL, IntentOutcomes.COMPLETION_SETTINGS,
				"bigint[], int[], text[], text[], bigint[], text[], text, bigint[]", values);
		assertThat(plans).doesNotContain("Seq Scan").doesNotContain("Nested Loop").contains("rows=" + batch);
	}

	@ParameterizedTest(name = "batch of {0}")
	@ValueSource(ints = { 1, 100, 1_000, 5_000 })
	void handedBackIntentsAreFoundByPrimaryKey(int batch) throws SQLException {
		List<Long> ids = JdbcClient.create(dataSource)
			.sql("SELECT id FROM eec_effect_intent WHERE status = 'in_flight' ORDER BY id LIMIT ?")
			.param(batch)
			.query(Long.class)
			.list();
		String idArray = "'{" + String.join(",", ids.stream().map(String::valueOf).toList()) + "}'";
		String plans = plans(IntentOutcomes.HAND_BACK_SQL, null, "bigint[], int[], text",
				idArray + ", array_fill(1, ARRAY[" + batch + "]), 'gone'");
		assertThat(plans).doesNotContain("Seq Scan").contains("rows=" + batch);
	}

	@ParameterizedTest(name = "{0} attempts held")
	@ValueSource(ints = { 1, 100, 5_000 })
	void theHeartbeatFindsEachAttemptItHoldsByPrimaryKeyNotByALoopOverEveryAttempt(int held) throws SQLException {
		List<Long> ids = JdbcClient.create(dataSource)
			.sql("SELECT id FROM eec_effect_intent WHERE lease_owner = 'alive' ORDER BY id LIMIT ?")
			.param(held)
			.query(Long.class)
			.list();
		String idArray = "'{" + String.join(",", ids.stream().map(String::valueOf).toList()) + "}'";
		String plans = plans(DrainerLeases.EXTEND_LEASES_SQL, null, "bigint[], int[], text, bigint, text",
				idArray + ", array_fill(1, ARRAY[" + held + "]), 'alive', 30000, 'alive'");
		assertThat(plans).doesNotContain("Seq Scan")
			.doesNotContain("Join Filter")
			.doesNotContain("Hash")
			.contains("eec_effect_intent_pkey")
			.contains("Update on eec_effect_intent")
			// every attempt held extended, in one pass (PostgreSQL 18 prints
			// rows=5000.00)
			.containsPattern("Update on eec_effect_intent .*actual [^)]*rows=" + held + "(\\.0+)? loops=1\\)");
	}

	@org.junit.jupiter.api.Test
	void aClaimFindsTheHoldersOfASlotByPrimaryKeyNotByEveryExpiredLease() throws SQLException {
		JdbcClient jdbc = JdbcClient.create(dataSource);
		// twenty slots whose holders' leases expired, among 5,000 expired leases
		jdbc.sql("""
				INSERT INTO eec_effect_slot (effect_name, slot, intent_id, attempt, updated_at)
				SELECT 'limited', g, (SELECT id FROM eec_effect_intent WHERE lease_owner = 'gone' ORDER BY id
				                      OFFSET g LIMIT 1), 1, now()
				FROM generate_series(1, 20) AS g ON CONFLICT DO NOTHING""").update();
		jdbc.sql("ANALYZE eec_effect_slot").update();
		String slots = "'{"
				+ String.join(",", java.util.stream.IntStream.rangeClosed(1, 20).mapToObj(String::valueOf).toList())
				+ "}'";
		String plans = plans(EffectSlots.FREE_SQL, null, "text, int[], text, int[]",
				"'limited', " + slots + ", 'limited', " + slots);
		assertThat(plans).doesNotContain("Seq Scan on eec_effect_intent")
			.doesNotContain("eec_effect_intent_lease_idx")
			.contains("eec_effect_intent_pkey");
	}

	@ParameterizedTest(name = "batch of {0}")
	@ValueSource(ints = { 1, 500, 10_000, 100_000 })
	void theReconcilerReadsTheLeaseIndexAndThePrimaryKey(int batch) throws SQLException {
		String plans = plans(IntentRedrive.redriveSql(List.of(), List.of()), null, "int", String.valueOf(batch),
				"limit");
		assertThat(plans).doesNotContain("Seq Scan").contains("eec_effect_intent_lease_idx");
	}

	@ParameterizedTest(name = "batch of {0}")
	@ValueSource(ints = { 1, 1_000, 10_000, 100_000 })
	void retentionWalksThePrimaryKey(int batch) throws SQLException {
		String walk = plans(IntentRetention.WALK_SQL, null, "bigint, bigint, bigint, int",
				"86400000, 86400000, 0, " + batch);
		assertThat(walk).doesNotContain("Seq Scan").contains("eec_effect_intent_pkey");
		List<Long> ids = JdbcClient.create(dataSource)
			.sql("SELECT id FROM eec_effect_intent ORDER BY id LIMIT ?")
			.param(batch)
			.query(Long.class)
			.list();
		String purge = plans(
				IntentRetention.PURGE_SQL.replace(":ids", String.join(",", ids.stream().map(String::valueOf).toList())),
				null, "bigint", "86400000", "retentionMs");
		assertThat(purge).doesNotContain("Seq Scan").contains("eec_effect_intent_pkey");
	}

	@ParameterizedTest(name = "batch of {0}")
	@ValueSource(ints = { 1, 1_000, 10_000 })
	void theSweepReadsItsIndex(int batch) throws SQLException {
		String plans = plans(LeaseSweep.LEASES_SQL, null, "bigint, bigint, bigint, bigint, bigint, int",
				"1000, 0, 0, txid_current(), 0, " + batch);
		assertThat(plans).doesNotContain("Seq Scan").contains("eec_effect_intent_lease_xid_idx");
	}

	@ParameterizedTest(name = "batch of {0}")
	@ValueSource(ints = { 1, 1_000, 10_000 })
	void bulkRetryReadsTheParkedIndexAndThePrimaryKey(int batch) throws SQLException {
		String plans = plans(OperatorMoves.RETRY_BATCH_SQL, null, "int, text, text, timestamptz, int",
				"3, 'bulk', 'failed', now(), " + batch, "budget", "name", "from", "asOf", "batch");
		assertThat(plans).doesNotContain("Seq Scan").contains("eec_effect_intent_parked_idx");
	}

	@ParameterizedTest(name = "{0} occurrences")
	@ValueSource(ints = { 0, 1_000 })
	void supersedingAnAlarmReadsTheAlarmIndexes(int occurrences) throws SQLException {
		JdbcClient jdbc = JdbcClient.create(dataSource);
		jdbc.sql("""
				INSERT INTO eec_effect_intent (effect_name, idempotency_key, payload, payload_fingerprint, max_attempts,
				    status, attempts, alarm_name, finished_at)
				SELECT 'bulk', 'alarm-' || ? || '-' || n, '[]', 'f', 1, 'failed', 1, 'alarm-' || n % 10, now()
				FROM generate_series(1, ?) AS n""").params(occurrences, occurrences).update();
		jdbc.sql("ANALYZE eec_effect_intent").update();
		String plans = plans(AlarmOccurrences.SUPERSEDE_ALARM_SQL, null, "text", "'alarm-1'", "alarm");
		assertThat(plans).doesNotContain("Seq Scan");
		if (occurrences == 0) {
			// nothing to tell the two alarm indexes apart: either is one empty probe
			assertThat(plans).containsAnyOf("eec_effect_intent_alarm_live_idx", "eec_effect_intent_alarm_name_idx");
		}
		else {
			// the live occurrences only, not every finished one of the console's index
			assertThat(plans).contains("eec_effect_intent_alarm_live_idx")
				.doesNotContain("eec_effect_intent_alarm_name_idx");
		}
	}

	/**
	 * The custom plan, then the generic plan, of {@code sql} run with {@code values},
	 * each in a transaction that is rolled back.
	 * @param settings what the statement's transaction sets first, or {@code null}
	 * @param parameters the named parameters of {@code sql}, in the order of
	 * {@code types}; none when it has positional ones
	 */
	private static String plans(String sql, String settings, String types, String values, String... parameters)
			throws SQLException {
		String positional = sql;
		for (int i = 0; i < parameters.length; i++) {
			positional = positional.replaceAll("(?<!:):" + parameters[i] + "\\b", "\\$" + (i + 1));
		}
		for (int i = 1; positional.contains("?"); i++) {
			positional = positional.replaceFirst("\\?", "\\$" + i);
		}
		List<String> lines = new ArrayList<>();
		try (Connection connection = dataSource.getConnection(); Statement statement = connection.createStatement()) {
			statement.execute("PREPARE under_test(" + types + ") AS " + positional);
			try {
				for (String mode : List.of("force_custom_plan", "force_generic_plan")) {
					connection.setAutoCommit(false);
					statement.execute("SET LOCAL plan_cache_mode = " + mode);
					if (settings != null) {
						statement.execute(settings);
					}
					lines.add("-- " + mode);
					try (ResultSet plan = statement
						.executeQuery("EXPLAIN (ANALYZE) EXECUTE under_test(" + values + ")")) {
						while (plan.next()) {
							lines.add(plan.getString(1));
						}
					}
					connection.rollback();
					connection.setAutoCommit(true);
				}
			}
			finally {
				statement.execute("DEALLOCATE under_test");
			}
		}
		String plans = String.join("\n", lines);
		System.out.println(plans);
		return plans;
	}

}
