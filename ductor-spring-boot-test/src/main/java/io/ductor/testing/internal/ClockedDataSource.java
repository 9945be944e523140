package io.ductor.testing.internal;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;

import javax.sql.DataSource;

import org.springframework.jdbc.datasource.DelegatingDataSource;

/**
 * Ductor's {@code DataSource} in a test with {@code @AutoConfigureDuctorTester}: every
 * connection taken from it carries the test's clock in the session setting
 * {@code ductor.clock}, which {@code ductor_now()} and {@code ductor_clock()} read
 * (migration V12), or clears it when the clock runs with the server's. The clock is
 * therefore moved for this application's connections only: another application on the
 * same database keeps the server's time, and nothing outlives the connections.
 * <p>
 * A connection takes the clock when it is taken from the pool: one that is held (a
 * transaction that stays open) keeps the clock it had.
 */
public final class ClockedDataSource extends DelegatingDataSource {

	private static final DateTimeFormatter ISO = DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss.SSSSSSXXX");

	private static final String SET_CLOCK = "SELECT set_config('ductor.clock', ?, false)";

	/** The clock as the setting holds it: an instant, or empty for the server's time. */
	private volatile String clock = "";

	/**
	 * @param target Ductor's DataSource
	 */
	public ClockedDataSource(DataSource target) {
		super(target);
	}

	/**
	 * Stops Ductor's clock at {@code instant} for the connections taken from now on, or
	 * gives them the server's clock.
	 * @param instant the instant (to the microsecond), or {@code null} for the server's
	 * time
	 */
	public void stopAt(Instant instant) {
		this.clock = (instant != null) ? ISO.format(instant.truncatedTo(ChronoUnit.MICROS).atOffset(ZoneOffset.UTC))
				: "";
	}

	@Override
	public Connection getConnection() throws SQLException {
		return withClock(super.getConnection());
	}

	@Override
	public Connection getConnection(String username, String password) throws SQLException {
		return withClock(super.getConnection(username, password));
	}

	private Connection withClock(Connection connection) throws SQLException {
		try (PreparedStatement set = connection.prepareStatement(SET_CLOCK)) {
			set.setString(1, this.clock);
			set.execute();
			if (!connection.getAutoCommit()) {
				// nothing else ran on it since it was taken: keep the setting whatever
				// the
				// next transaction does
				connection.commit();
			}
			return connection;
		}
		catch (SQLException | RuntimeException ex) {
			connection.close();
			throw ex;
		}
	}

}
