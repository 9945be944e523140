package io.ductor.actuate.internal;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;

import com.zaxxer.hikari.HikariDataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.jdbc.core.simple.JdbcClient;

import io.ductor.jdbc.SchemaMode;
import io.ductor.jdbc.internal.DuctorSchema;
import io.ductor.test.PostgresExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The console's page of named alarms at 500,000 intents, 50,000 of them occurrences of
 * 5,000 alarms, reads the alarm indexes and never the whole intent table, with the plan
 * the server picks for one call and with the generic plan a prepared statement may settle
 * on, on the first page, a page far down and a prefix.
 */
class ConsoleAlarmPlansTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	static HikariDataSource dataSource;

	@BeforeAll
	static void fill() {
		dataSource = postgres.newDataSource(2);
		new DuctorSchema(dataSource, SchemaMode.MIGRATE).afterPropertiesSet();
		JdbcClient jdbc = JdbcClient.create(dataSource);
		// one intent in ten is an occurrence of one of 5,000 alarms (ten each, finished),
		// and each alarm has one pending occurrence beside them
		jdbc.sql("""
				INSERT INTO eec_effect_intent (effect_name, idempotency_key, payload, payload_fingerprint, max_attempts,
				    status, finished_at, alarm_name)
				SELECT 'bulk', 'done-' || n, '[]', 'f', 1, CASE WHEN n % 7 = 0 THEN 'cancelled' ELSE 'completed' END,
				       now(), CASE WHEN n % 10 = 3 THEN 'reminder:order-' || (n / 100) END
				FROM generate_series(1, 500000) AS n""").update();
		jdbc.sql("""
				INSERT INTO eec_effect_intent (effect_name, idempotency_key, payload, payload_fingerprint, max_attempts,
				    alarm_name)
				SELECT 'bulk', 'next-' || a, '[]', 'f', 1, 'reminder:order-' || a FROM generate_series(0, 4999) AS a""")
			.update();
		jdbc.sql("VACUUM ANALYZE eec_effect_intent").update();
	}

	@AfterAll
	static void close() {
		dataSource.close();
	}

	@ParameterizedTest(name = "after ''{0}'', prefix ''{1}''")
	@CsvSource({ "'', ''", "reminder:order-4000, ''", "'', reminder:order-49" })
	void aPageOfNamedAlarmsReadsTheAlarmIndexesOnly(String after, String prefix) throws SQLException {
		String plans = plans(DuctorInspector.ONE_SHOT_ALARMS, "text, text, int",
				"'" + after + "', '" + prefix + "', 50");
		assertThat(plans).doesNotContain("Seq Scan")
			.doesNotContain("Bitmap Heap Scan on eec_effect_intent")
			.contains("eec_effect_intent_alarm_name_idx")
			.contains("eec_effect_intent_alarm_idx");
	}

	/**
	 * The custom plan, then the generic plan, of {@code sql} (named parameters
	 * {@code :after}, {@code :prefix}, {@code :limit}) run with {@code values}.
	 */
	private static String plans(String sql, String types, String values) throws SQLException {
		String positional = sql.replace(":after", "$1").replace(":prefix", "$2").replace(":limit", "$3");
		List<String> lines = new ArrayList<>();
		try (Connection connection = dataSource.getConnection(); Statement statement = connection.createStatement()) {
			statement.execute("PREPARE under_test(" + types + ") AS " + positional);
			try {
				for (String mode : List.of("force_custom_plan", "force_generic_plan")) {
					connection.setAutoCommit(false);
					statement.execute("SET LOCAL plan_cache_mode = " + mode);
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
