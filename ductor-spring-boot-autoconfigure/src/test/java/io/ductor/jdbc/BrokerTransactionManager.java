package io.ductor.jdbc;

import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.support.AbstractPlatformTransactionManager;
import org.springframework.transaction.support.DefaultTransactionStatus;

/**
 * A transaction manager of something else than the database, as a message broker's
 * (Kafka's, a JMS provider's): its transactions are real to Spring (an actual
 * transaction, synchronization active) but hold no connection of the database; a
 * statement run in one binds a connection that commits on its own.
 */
public final class BrokerTransactionManager extends AbstractPlatformTransactionManager {

	@Override
	protected Object doGetTransaction() {
		return new Object();
	}

	@Override
	protected void doBegin(Object transaction, TransactionDefinition definition) {
	}

	@Override
	protected void doCommit(DefaultTransactionStatus status) {
	}

	@Override
	protected void doRollback(DefaultTransactionStatus status) {
	}

}
