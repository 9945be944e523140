package io.ductor.testing;

import java.sql.SQLException;
import java.time.Duration;
import java.time.OffsetDateTime;

import javax.sql.DataSource;

import org.springframework.jdbc.core.JdbcTemplate;

import io.ductor.testing.internal.ClockedDataSource;

/**
 * Ductor's clock in a test: the instant that the functions {@code ductor_now()} and
 * {@code ductor_clock()}, which every statement of Ductor reads the time through, return
 * on the connections of the application under test. The instant is the session setting
 * {@code ductor.clock}, which the {@link ClockedDataSource} that wraps Ductor's
 * DataSource sets on every connection taken from it: nothing changes in the database, and
 * another application on it keeps the server's time.
 */
final class DuctorClock {

	private final JdbcTemplate jdbc;

	private final ClockedDataSource clocked;

	/**
	 * @param dataSource Ductor's DataSource, a {@link ClockedDataSource} or a wrapper of
	 * one
	 */
	DuctorClock(DataSource dataSource) {
		this.jdbc = new JdbcTemplate(dataSource);
		this.clocked = clocked(dataSource);
	}

	/** Stop Ductor's clock at the server's time now. */
	synchronized void freezeAtServerTime() {
		this.clocked.stopAt(this.jdbc.queryForObject("SELECT clock_timestamp()", OffsetDateTime.class).toInstant());
	}

	synchronized OffsetDateTime now() {
		return this.jdbc.queryForObject("SELECT ductor_now()", OffsetDateTime.class);
	}

	synchronized void advance(Duration duration) {
		this.clocked.stopAt(now().toInstant().plus(duration));
	}

	/** Give Ductor the server's clock back. */
	synchronized void release() {
		this.clocked.stopAt(null);
	}

	private static ClockedDataSource clocked(DataSource dataSource) {
		try {
			if (dataSource.isWrapperFor(ClockedDataSource.class)) {
				return dataSource.unwrap(ClockedDataSource.class);
			}
		}
		catch (SQLException ex) {
			// not a wrapper that can say: as if it were none
		}
		throw new IllegalStateException("DuctorTester moves Ductor's clock on the connections of Ductor's "
				+ "DataSource, which @AutoConfigureDuctorTester wraps; this DataSource ("
				+ dataSource.getClass().getName()
				+ ") is not wrapped. Create the DuctorTester through @AutoConfigureDuctorTester.");
	}

}
