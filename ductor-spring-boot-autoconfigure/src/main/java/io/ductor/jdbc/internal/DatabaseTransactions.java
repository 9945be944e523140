package io.ductor.jdbc.internal;

import java.sql.SQLException;

import javax.sql.DataSource;

import org.springframework.jdbc.CannotGetJdbcConnectionException;
import org.springframework.jdbc.datasource.ConnectionHolder;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * Whether the current thread runs in a transaction of a database: one holding a
 * connection of the {@code DataSource} with auto-commit off, as the transactions of
 * {@code DataSourceTransactionManager} and {@code JpaTransactionManager} do. A
 * transaction of another transaction manager (a message broker's, as a Kafka or JMS
 * listener container runs its listener in) is none, even when a statement it ran bound a
 * connection to it: that connection commits every statement on its own.
 */
public final class DatabaseTransactions {

	private DatabaseTransactions() {
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
