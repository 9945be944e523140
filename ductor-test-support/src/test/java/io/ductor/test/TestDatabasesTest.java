package io.ductor.test;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Instant;
import java.util.Properties;

import com.zaxxer.hikari.HikariDataSource;
import org.junit.jupiter.api.Test;

import static io.ductor.test.Databases.execute;
import static io.ductor.test.Databases.exists;
import static io.ductor.test.Databases.queryLong;
import static io.ductor.test.Databases.queryString;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

class TestDatabasesTest {

	@Test
	void createsAFreshEmptyDatabaseAndDropRemovesIt() throws SQLException {
		TestDatabase db = TestDatabases.create();
		assertThat(db.name()).matches("ductor_test_\\d+_[a-z0-9]{8}");
		long epoch = Long.parseLong(db.name().split("_")[2]);
		assertThat(epoch).isBetween(Instant.now().getEpochSecond() - 60, Instant.now().getEpochSecond());
		assertThat(exists(db.name())).isTrue();
		assertThat(Databases.userObjects(db)).isZero();
		boolean schema = Databases.isSchema(db);
		try (Connection connection = db.connect()) {
			assertThat(queryString(connection, schema ? "SELECT current_schema()" : "SELECT current_database()"))
				.isEqualTo(db.name());
			execute(connection, "CREATE TABLE leftover (id int)");
		}

		TestDatabases.drop(db);

		assertThat(exists(db.name())).isFalse();
		if (schema) {
			try (Connection connection = db.connect()) {
				assertThat(queryString(connection, "SELECT current_schema()")).isNull();
			}
		}
		else {
			SQLException e = catchThrowableOfType(SQLException.class, db::connect);
			assertThat(e.getSQLState()).isEqualTo("3D000"); // invalid_catalog_name
		}
	}

	@Test
	void dropTerminatesConnectionsStillOpen() throws SQLException {
		TestDatabase db = TestDatabases.create();
		try (HikariDataSource pool = db.newDataSource(2); Connection open = pool.getConnection()) {
			execute(open, "CREATE TABLE t (id int)");
			TestDatabases.drop(db);
			assertThat(exists(db.name())).isFalse();
		}
	}

	@Test
	void refusesToDropWhatItDidNotName() {
		TestDatabase db = TestDatabases.create();
		try {
			TestDatabase foreign = new TestDatabase(db.jdbcUrl(), db.username(), db.password(), "postgres");
			assertThatIllegalArgumentException().isThrownBy(() -> TestDatabases.drop(foreign));
		}
		finally {
			TestDatabases.drop(db);
		}
	}

	@Test
	void reportsTheServer() throws SQLException {
		TestDatabase db = TestDatabases.create();
		try (Connection connection = db.connect()) {
			long versionNum = queryLong(connection, "SELECT current_setting('server_version_num')::int");
			assertThat(db.serverMajorVersion()).isEqualTo(versionNum / 10000).isGreaterThanOrEqualTo(13);
			assertThat(TestDatabases.describeServer()).contains("PostgreSQL " + db.serverMajorVersion() + ".");
		}
		finally {
			TestDatabases.drop(db);
		}
	}

	@Test
	void terminateConnectionsKillsExactlyTheMatchingBackends() throws SQLException {
		TestDatabase db = TestDatabases.create();
		try (Connection victim1 = connect(db, "victim-1");
				Connection victim2 = connect(db, "victim-2");
				Connection bystander = connect(db, "bystander")) {

			assertThat(TestDatabases.terminateConnections(db, "victim-%")).isEqualTo(2);

			assertThatExceptionOfType(SQLException.class).isThrownBy(() -> queryLong(victim1, "SELECT 1"));
			assertThatExceptionOfType(SQLException.class).isThrownBy(() -> queryLong(victim2, "SELECT 1"));
			assertThat(queryLong(bystander, "SELECT 1")).isEqualTo(1);
			assertThat(TestDatabases.terminateConnections(db, "victim-%")).isZero();
		}
		finally {
			TestDatabases.drop(db);
		}
	}

	@Test
	void poolConnectionsCarryThePoolNameSoTheyCanBeTargeted() throws SQLException {
		TestDatabase db = TestDatabases.create();
		try (HikariDataSource pool = db.newDataSource(1)) {
			assertThat(pool.getPoolName()).startsWith(db.name());
			try (Connection borrowed = pool.getConnection()) {
				assertThat(queryString(borrowed, "SELECT current_setting('application_name')"))
					.isEqualTo(pool.getPoolName());
				// at least: the connection Hikari opened to fail fast may still be on its
				// way out
				assertThat(TestDatabases.terminateConnections(db, pool.getPoolName())).isGreaterThanOrEqualTo(1);
				assertThatExceptionOfType(SQLException.class).isThrownBy(() -> queryLong(borrowed, "SELECT 1"));
			}
		}
		finally {
			TestDatabases.drop(db);
		}
	}

	private static Connection connect(TestDatabase db, String applicationName) throws SQLException {
		Properties properties = new Properties();
		properties.setProperty("user", db.username());
		if (db.password() != null) {
			properties.setProperty("password", db.password());
		}
		properties.setProperty("ApplicationName", applicationName);
		return DriverManager.getConnection(db.jdbcUrl(), properties);
	}

}
