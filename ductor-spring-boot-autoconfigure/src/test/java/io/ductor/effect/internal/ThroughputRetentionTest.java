package io.ductor.effect.internal;

import java.time.Duration;
import java.util.List;

import com.zaxxer.hikari.HikariDataSource;
import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.Test;

import org.springframework.jdbc.core.simple.JdbcClient;

import io.ductor.jdbc.internal.DuctorSchema;
import io.ductor.test.TestDatabase;
import io.ductor.test.TestDatabases;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The console's completions per minute ({@code eec_effect_throughput}, a row per minute)
 * are kept a day, as the migration that made the table says, by the effects' retention:
 * the table does not grow by a row a minute for ever.
 */
class ThroughputRetentionTest {

	@Test
	void retentionDeletesTheMinutesOlderThanADay() {
		TestDatabase database = TestDatabases.create();
		try (HikariDataSource dataSource = database.newDataSource(2)) {
			Flyway.configure()
				.dataSource(dataSource)
				.locations(DuctorSchema.LOCATION)
				.table(DuctorSchema.HISTORY_TABLE)
				.load()
				.migrate();
			JdbcClient jdbc = JdbcClient.create(dataSource);
			for (String age : List.of("2 days", "25 hours", "23 hours", "1 minute")) {
				jdbc.sql("""
						INSERT INTO eec_effect_throughput (minute, completed, lag_ms_sum, lag_ms_max)
						VALUES (date_trunc('minute', ductor_now() - CAST(? AS interval)), 1, 1, 1)""")
					.param(age)
					.update();
			}
			new IntentRetention(dataSource).purge(Duration.ofDays(7), 100);
			assertThat(jdbc.sql("""
					SELECT count(*) FROM eec_effect_throughput WHERE minute < ductor_now() - interval '1 day'""")
				.query(Long.class)
				.single()).as("minutes older than a day").isZero();
			assertThat(jdbc.sql("SELECT count(*) FROM eec_effect_throughput").query(Long.class).single())
				.as("minutes of the last day")
				.isEqualTo(2);
		}
		finally {
			TestDatabases.drop(database);
		}
	}

}
