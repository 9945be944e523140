package io.ductor.test;

import java.util.ArrayList;
import java.util.List;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariDataSource;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * JUnit 5 extension giving a test class its own fresh PostgreSQL database (see
 * {@link TestDatabases}).
 *
 * <pre>{@code
 * &#64;RegisterExtension
 * static final PostgresExtension postgres = new PostgresExtension();
 * }</pre>
 *
 * <p>
 * The database is created on first access or in {@code beforeAll}, whichever comes first,
 * and dropped in {@code afterAll} of the class that registered the extension (not of its
 * {@code @Nested} classes), after the pools handed out here are closed. Register it on a
 * {@code static} field: an instance field gets neither callback, so nothing would be
 * dropped. Test and lifecycle method parameters of type {@link TestDatabase} and
 * {@link DataSource} are resolved to {@link #database()} and {@link #dataSource()}.
 */
public final class PostgresExtension implements BeforeAllCallback, AfterAllCallback, ParameterResolver {

	private static final int SHARED_POOL_SIZE = 20;

	private TestDatabase database;

	private HikariDataSource sharedPool;

	private final List<HikariDataSource> extraPools = new ArrayList<>();

	/**
	 * Unique id of the class that owns the database; nested classes see the callbacks
	 * too.
	 */
	private String owner;

	@Override
	public synchronized void beforeAll(ExtensionContext context) {
		if (owner == null) {
			owner = context.getUniqueId();
			database();
		}
	}

	@Override
	public synchronized void afterAll(ExtensionContext context) {
		if (!context.getUniqueId().equals(owner)) {
			return;
		}
		owner = null;
		try {
			extraPools.forEach(HikariDataSource::close);
			if (sharedPool != null) {
				sharedPool.close();
			}
		}
		finally {
			extraPools.clear();
			sharedPool = null;
			TestDatabase dropped = database;
			database = null; // a base class's static extension serves its next subclass
								// with a new database
			if (dropped != null) {
				TestDatabases.drop(dropped);
			}
		}
	}

	/** Returns this class's database, creating it on first call. */
	public synchronized TestDatabase database() {
		if (database == null) {
			database = TestDatabases.create();
		}
		return database;
	}

	/** Returns the JDBC URL of {@link #database()}. */
	public String jdbcUrl() {
		return database().jdbcUrl();
	}

	/** Returns the role to connect to {@link #database()} as. */
	public String username() {
		return database().username();
	}

	/**
	 * Returns the password for {@link #username()}, or {@code null} when none is
	 * configured.
	 */
	public String password() {
		return database().password();
	}

	/**
	 * Returns the {@code spring.datasource.*} properties of {@link #database()}; see
	 * {@link TestDatabase#springProperties}.
	 */
	public String[] springProperties() {
		return database().springProperties();
	}

	/**
	 * Returns one shared pool (at most 20 connections) on {@link #database()}, closed in
	 * {@code afterAll}.
	 */
	public synchronized DataSource dataSource() {
		if (sharedPool == null) {
			sharedPool = database().newDataSource(SHARED_POOL_SIZE);
		}
		return sharedPool;
	}

	/**
	 * Returns an additional pool on {@link #database()}, closed in {@code afterAll}; see
	 * {@link TestDatabase#newDataSource}.
	 */
	public synchronized HikariDataSource newDataSource(int maxPoolSize) {
		HikariDataSource pool = database().newDataSource(maxPoolSize);
		extraPools.add(pool);
		return pool;
	}

	@Override
	public boolean supportsParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
		Class<?> type = parameterContext.getParameter().getType();
		return type == TestDatabase.class || type == DataSource.class;
	}

	@Override
	public Object resolveParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
		return parameterContext.getParameter().getType() == TestDatabase.class ? database() : dataSource();
	}

}
