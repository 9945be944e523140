package io.ductor.metrics.internal;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;
import org.postgresql.ds.PGSimpleDataSource;

import org.springframework.dao.DataAccessException;
import org.springframework.jdbc.datasource.DelegatingDataSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** What the backlog asks of a database it cannot reach. */
class DuctorBacklogTest {

	@Test
	void anUnreachableDatabaseIsAskedOncePerCacheTtlNotOncePerGauge() {
		PGSimpleDataSource unreachable = new PGSimpleDataSource();
		unreachable.setUrl("jdbc:postgresql://127.0.0.1:1/none?connectTimeout=2");
		AtomicInteger connections = new AtomicInteger();
		DelegatingDataSource counting = new DelegatingDataSource(unreachable) {

			@Override
			public Connection getConnection() throws SQLException {
				connections.incrementAndGet();
				return super.getConnection();
			}

		};
		DuctorBacklog backlog = new DuctorBacklog(counting, Duration.ofHours(1), 100);
		for (int gauge = 0; gauge < 6; gauge++) {
			assertThatThrownBy(backlog::snapshot).isInstanceOf(DataAccessException.class);
		}
		assertThat(connections).hasValue(1);
		// an explicit refresh (health, the endpoint) always asks
		assertThatThrownBy(backlog::refresh).isInstanceOf(DataAccessException.class);
		assertThat(connections).hasValue(2);
	}

}
