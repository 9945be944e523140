package io.ductor.test;

import java.sql.Connection;
import java.sql.SQLException;

import com.zaxxer.hikari.HikariDataSource;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.RegisterExtension;

import static io.ductor.test.Databases.execute;
import static io.ductor.test.Databases.queryLong;
import static io.ductor.test.Databases.queryString;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two extensions in one class stand for two test classes: each must get its own, empty,
 * isolated database.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class PostgresExtensionTest {

	@RegisterExtension
	static final PostgresExtension first = new PostgresExtension();

	@RegisterExtension
	static final PostgresExtension second = new PostgresExtension();

	@Test
	@Order(1)
	void eachStartsEmpty() throws SQLException {
		assertThat(Databases.userObjects(first.database())).isZero();
		assertThat(Databases.userObjects(second.database())).isZero();
	}

	@Test
	@Order(2)
	void eachGetsItsOwnDatabase() throws SQLException {
		assertThat(first.database().name()).isNotEqualTo(second.database().name());
		assertThat(first.jdbcUrl()).isNotEqualTo(second.jdbcUrl());
		for (PostgresExtension postgres : new PostgresExtension[] { first, second }) {
			String query = Databases.isSchema(postgres.database()) ? "SELECT current_schema()"
					: "SELECT current_database()";
			try (Connection connection = postgres.dataSource().getConnection()) {
				assertThat(queryString(connection, query)).isEqualTo(postgres.database().name());
				assertThat(queryString(connection, "SELECT current_user")).isEqualTo(postgres.username());
			}
		}
	}

	@Test
	@Order(3)
	void objectsInOneAreInvisibleInTheOther() throws SQLException {
		try (Connection connection = first.dataSource().getConnection()) {
			execute(connection, "CREATE TABLE shared_name (id int)");
			execute(connection, "INSERT INTO shared_name VALUES (1)");
		}
		try (Connection connection = second.dataSource().getConnection()) {
			assertThat(queryString(connection, "SELECT to_regclass('shared_name')::text")).isNull();
			execute(connection, "CREATE TABLE shared_name (id int)");
			assertThat(queryLong(connection, "SELECT count(*) FROM shared_name")).isZero();
		}
		assertThat(Databases.userObjects(second.database())).isPositive();
	}

	@Test
	@Order(4)
	void extraPoolsAreSeparateAndNamedAfterTheDatabase() throws SQLException {
		HikariDataSource pool = first.newDataSource(3);
		assertThat(pool).isNotSameAs(first.dataSource());
		assertThat(pool.getMaximumPoolSize()).isEqualTo(3);
		assertThat(((HikariDataSource) first.dataSource()).getMaximumPoolSize()).isEqualTo(20);
		assertThat(pool.getPoolName()).contains(first.database().name());
		try (Connection connection = pool.getConnection()) {
			assertThat(queryLong(connection, "SELECT count(*) FROM shared_name")).isEqualTo(1);
		}
	}

}
