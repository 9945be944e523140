package io.ductor.jdbc.internal;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.sql.SQLException;
import java.util.List;

import javax.sql.DataSource;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.jdbc.CannotGetJdbcConnectionException;
import org.springframework.jdbc.datasource.ConnectionHolder;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.ResourceTransactionManager;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.transaction.support.TransactionSynchronizationUtils;
import org.springframework.util.ReflectionUtils;

/**
 * Whether the current thread runs in a transaction of a database: one holding a
 * connection of the {@code DataSource} with auto-commit off, as the transactions of
 * {@code DataSourceTransactionManager} and {@code JpaTransactionManager} do. A
 * transaction of another transaction manager (a message broker's, as a Kafka or JMS
 * listener container runs its listener in) is none, even when a statement it ran bound a
 * connection to it: that connection commits every statement on its own.
 */
public final class DatabaseTransactions {

	private static final Log logger = LogFactory.getLog(DatabaseTransactions.class);

	private static final String JTA_TRANSACTION_MANAGER = "org.springframework.transaction.jta.JtaTransactionManager";

	private DatabaseTransactions() {
	}

	/**
	 * The transaction manager for transactions of a database: the first of the
	 * application's that manages that database ({@code DataSourceTransactionManager},
	 * {@code JdbcTransactionManager}, {@code JpaTransactionManager} and
	 * {@code HibernateTransactionManager} of this {@code DataSource}, or JTA), so that
	 * its {@code @Transactional} work joins them; otherwise (none, or only ones of other
	 * resources, a message broker's) a {@code DataSourceTransactionManager} of the
	 * database, whose transactions the application's JDBC work joins all the same.
	 * @param candidates the application's transaction managers, its unique or primary one
	 * first
	 * @param dataSource the database
	 * @return a transaction manager whose transactions hold a connection of it
	 */
	public static PlatformTransactionManager managerOf(List<PlatformTransactionManager> candidates,
			DataSource dataSource) {
		for (PlatformTransactionManager candidate : candidates) {
			if (manages(candidate, dataSource)) {
				return candidate;
			}
		}
		if (!candidates.isEmpty()) {
			logger.info("Ductor's transactions use a DataSourceTransactionManager of its DataSource: none of the"
					+ " application's transaction managers " + candidates + " manages that database");
		}
		return CommittingTransactions.addTo(new DataSourceTransactionManager(dataSource));
	}

	private static boolean manages(PlatformTransactionManager candidate, DataSource dataSource) {
		for (Class<?> type = candidate.getClass(); type != null; type = type.getSuperclass()) {
			// by name: its class needs the JTA API, which may be missing
			if (JTA_TRANSACTION_MANAGER.equals(type.getName())) {
				return true;
			}
		}
		Object database = TransactionSynchronizationUtils.unwrapResourceIfNecessary(dataSource);
		if (candidate instanceof ResourceTransactionManager resources && TransactionSynchronizationUtils
			.unwrapResourceIfNecessary(resources.getResourceFactory()) == database) {
			return true;
		}
		// JPA's and Hibernate's transaction managers expose the connection of their
		// DataSource to JDBC code
		Method getDataSource = ReflectionUtils.findMethod(candidate.getClass(), "getDataSource");
		if (getDataSource == null || !DataSource.class.isAssignableFrom(getDataSource.getReturnType())
				|| !Modifier.isPublic(getDataSource.getModifiers())) {
			return false;
		}
		ReflectionUtils.makeAccessible(getDataSource);
		Object exposed = ReflectionUtils.invokeMethod(getDataSource, candidate);
		return exposed != null && TransactionSynchronizationUtils.unwrapResourceIfNecessary(exposed) == database;
	}

	/**
	 * @param dataSource the database
	 * @return whether statements on {@code dataSource} run in the current transaction,
	 * committing or rolling back with it
	 */
	public static boolean active(DataSource dataSource) {
		if (!TransactionSynchronizationManager.isActualTransactionActive()) {
			return false;
		}
		if (!(TransactionSynchronizationManager.getResource(dataSource) instanceof ConnectionHolder holder)) {
			return false;
		}
		try {
			return !holder.getConnection().getAutoCommit();
		}
		catch (SQLException ex) {
			throw new CannotGetJdbcConnectionException(
					"Could not tell whether the current transaction holds a" + " connection of the database", ex);
		}
	}

}
