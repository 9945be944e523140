package io.ductor.testing;

import java.sql.Connection;
import java.sql.DriverManager;
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

import io.ductor.jdbc.internal.DuctorSchema;
import io.ductor.jdbc.SchemaMode;
import io.ductor.test.PostgresExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Moving Ductor's clock reaches statements that are already prepared on the server and
 * run with a cached generic plan: replacing the function invalidates the plans that
 * inlined it.
 */
class DuctorClockTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	static DuctorClock clock;

	@BeforeAll
	static void migrate() {
		new DuctorSchema(postgres.dataSource(), SchemaMode.MIGRATE).afterPropertiesSet();
		clock = new DuctorClock(new JdbcTemplate(postgres.dataSource()));
	}

	@Test
	void aStatementPreparedOnTheServerSeesTheClockMove() throws SQLException {
		clock.freezeAtServerTime();
		Properties properties = new Properties();
		properties.setProperty("user", postgres.username());
		if (postgres.password() != null) {
			properties.setProperty("password", postgres.password());
		}
		properties.setProperty("prepareThreshold", "1");
		try (Connection connection = DriverManager.getConnection(postgres.jdbcUrl(), properties);
				PreparedStatement due = connection.prepareStatement("""
						SELECT ductor_now(), (SELECT count(*) FROM eec_effect_intent
						                      WHERE status = 'pending' AND next_attempt_at <= ductor_now())""")) {
			connection.createStatement()
				.execute(
						"""
								INSERT INTO eec_effect_intent (effect_name, idempotency_key, payload, payload_fingerprint, max_attempts,
								    next_attempt_at)
								VALUES ('later', 'later-1', '[]', 'f', 1, ductor_now() + interval '1 hour')""");
			OffsetDateTime frozen = null;
			for (int i = 0; i < 10; i++) {
				// past the five custom plans after which the server may keep a generic
				// one
				try (ResultSet row = due.executeQuery()) {
					row.next();
					assertThat(row.getLong(2)).isZero();
					frozen = row.getObject(1, OffsetDateTime.class);
				}
			}
			assertThat(clock.now()).isEqualTo(frozen);
			clock.advance(Duration.ofHours(1));
			try (ResultSet row = due.executeQuery()) {
				row.next();
				assertThat(row.getObject(1, OffsetDateTime.class)).isEqualTo(frozen.plusHours(1));
				assertThat(row.getLong(2)).isOne();
			}
		}
		finally {
			clock.release();
		}
		assertThat(new JdbcTemplate(postgres.dataSource())
			.queryForObject("SELECT abs(extract(epoch FROM ductor_now() - now())) < 1", Boolean.class)).isTrue();
	}

}
