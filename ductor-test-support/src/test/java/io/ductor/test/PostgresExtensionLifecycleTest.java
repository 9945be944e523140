package io.ductor.test;

import java.sql.Connection;
import java.sql.SQLException;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariDataSource;
import org.junit.jupiter.api.ClassOrderer;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestClassOrder;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.platform.launcher.core.LauncherFactory;
import org.junit.platform.launcher.listeners.SummaryGeneratingListener;
import org.junit.platform.launcher.listeners.TestExecutionSummary;

import static io.ductor.test.Databases.exists;
import static io.ductor.test.Databases.queryLong;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;
import static org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder.request;

/**
 * Runs {@link Probe} as a test class of its own and checks what the extension left
 * behind.
 */
class PostgresExtensionLifecycleTest {

	@Test
	void databaseLivesAsLongAsTheClassIncludingNestedClassesAndIsDroppedAfterwards() throws SQLException {
		SummaryGeneratingListener listener = new SummaryGeneratingListener();
		Probe.launched = true;
		try {
			LauncherFactory.create().execute(request().selectors(selectClass(Probe.class)).build(), listener);
		}
		finally {
			Probe.launched = false;
		}

		TestExecutionSummary summary = listener.getSummary();
		assertThat(summary.getFailures()).extracting(f -> f.getException().toString()).isEmpty();
		assertThat(summary.getTestsSucceededCount()).isEqualTo(3);
		assertThat(exists(Probe.database.name())).isFalse();
		assertThat(((HikariDataSource) Probe.shared).isClosed()).isTrue();
		assertThat(Probe.extra.isClosed()).isTrue();
	}

	/**
	 * Only meaningful when launched by the test above; skipped if an IDE picks it up on
	 * its own.
	 */
	@TestClassOrder(ClassOrderer.OrderAnnotation.class)
	static class Probe {

		@RegisterExtension
		static final PostgresExtension postgres = new PostgresExtension();

		static volatile boolean launched;
		static TestDatabase database;
		static DataSource shared;
		static HikariDataSource extra;

		@Test
		void resolvesParametersToTheClassDatabase(TestDatabase db, DataSource dataSource) throws SQLException {
			assumeThat(launched).isTrue();
			assertThat(db).isSameAs(postgres.database());
			assertThat(dataSource).isSameAs(postgres.dataSource());
			database = db;
			shared = dataSource;
			extra = postgres.newDataSource(2);
			try (Connection connection = extra.getConnection()) {
				assertThat(queryLong(connection, "SELECT 1")).isEqualTo(1);
			}
		}

		@Nested
		@Order(1)
		class First {

			@Test
			void seesTheSameDatabase(TestDatabase db) {
				assumeThat(launched).isTrue();
				assertThat(db).isSameAs(database);
			}

		}

		@Nested
		@Order(2)
		class Second {

			@Test
			void stillSeesItAfterTheFirstNestedClassFinished(TestDatabase db) throws SQLException {
				assumeThat(launched).isTrue();
				assertThat(db).isSameAs(database);
				assertThat(exists(db.name())).isTrue();
			}

		}

	}

}
