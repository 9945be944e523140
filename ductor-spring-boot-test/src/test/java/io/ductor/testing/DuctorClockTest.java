package io.ductor.testing;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.Properties;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.SingleConnectionDataSource;

import io.ductor.jdbc.SchemaMode;
import io.ductor.jdbc.internal.DuctorSchema;
import io.ductor.test.PostgresExtension;
import io.ductor.testing.internal.ClockedDataSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * The tester's clock is a setting of the connections taken from Ductor's DataSource: a
 * statement prepared on the server and run with a cached generic plan sees it move, a
 * connection of another DataSource on the same database keeps the server's time, and
 * nothing in the database changes.
 */
class DuctorClockTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	@BeforeAll
	static void migrate() {
		new DuctorSchema(postgres.dataSource(), SchemaMode.MIGRATE).afterPropertiesSet();
	}

	@Test
	void aStatementPreparedOnTheServerSeesTheClockMove() throws SQLException {
		SingleConnectionDataSource single = new SingleConnectionDataSource(postgres.jdbcUrl(), postgres.username(),
				(postgres.password() != null) ? postgres.password() : "", true);
		Properties properties = new Properties();
		properties.setProperty("prepareThreshold", "1");
		single.setConnectionProperties(properties);
		ClockedDataSource clocked = new ClockedDataSource(single);
		DuctorClock clock = new DuctorClock(clocked);
		String due = """
				SELECT ductor_now(), (SELECT count(*) FROM eec_effect_intent
				                      WHERE status = 'pending' AND next_attempt_at <= ductor_now())""";
		try {
			clock.freezeAtServerTime();
			new JdbcTemplate(clocked).execute(
					"""
							INSERT INTO eec_effect_intent (effect_name, idempotency_key, payload, payload_fingerprint, max_attempts,
							    next_attempt_at)
							VALUES ('later', 'later-1', '[]', 'f', 1, ductor_now() + interval '1 hour')""");
			OffsetDateTime frozen = null;
			for (int i = 0; i < 10; i++) {
				// past the five custom plans after which the server may keep a generic
				// one;
				// the driver keeps the statement prepared on the connection between uses
				try (Connection connection = clocked.getConnection();
						PreparedStatement statement = connection.prepareStatement(due);
						ResultSet row = statement.executeQuery()) {
					row.next();
					assertThat(row.getLong(2)).isZero();
					frozen = row.getObject(1, OffsetDateTime.class);
				}
			}
			assertThat(clock.now()).isEqualTo(frozen);
			clock.advance(Duration.ofHours(1));
			try (Connection connection = clocked.getConnection();
					PreparedStatement statement = connection.prepareStatement(due);
					ResultSet row = statement.executeQuery()) {
				row.next();
				assertThat(row.getObject(1, OffsetDateTime.class)).isEqualTo(frozen.plusHours(1));
				assertThat(row.getLong(2)).isOne();
			}
			// another application's connections keep the server's time, and the clock's
			// functions are as the migration left them
			JdbcTemplate other = new JdbcTemplate(postgres.dataSource());
			assertThat(other.queryForObject("SELECT abs(extract(epoch FROM ductor_now() - clock_timestamp())) < 60",
					Boolean.class))
				.isTrue();
			assertThat(other.queryForList(
					"SELECT prosrc FROM pg_proc WHERE proname IN ('ductor_now', 'ductor_clock') ORDER BY proname",
					String.class))
				.allSatisfy((body) -> assertThat(body).contains("current_setting('ductor.clock', true)"));
		}
		finally {
			clock.release();
		}
		assertThat(new JdbcTemplate(clocked).queryForObject("SELECT abs(extract(epoch FROM ductor_now() - now())) < 1",
				Boolean.class))
			.isTrue();
		single.destroy();
	}

	@Test
	void aDataSourceThatDoesNotCarryTheClockIsRefusedWithAnExplanation() {
		assertThatIllegalStateException().isThrownBy(() -> new DuctorClock(postgres.dataSource()))
			.withMessageContaining("@AutoConfigureDuctorTester");
	}

}
