package io.ductor.jdbc.internal;

import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.transaction.ConfigurableTransactionManager;
import org.springframework.transaction.TransactionExecution;
import org.springframework.transaction.TransactionExecutionListener;
import org.springframework.transaction.TransactionManager;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * Tells whether the current transaction has begun to commit. From its commit until its
 * resources are released, a transaction's {@code afterCommit} and {@code afterCompletion}
 * callbacks run with its connection still bound to the thread and its synchronization
 * still active: a statement run there joins a transaction that has committed already, and
 * commits only if the connection's return to auto-commit commits it (on a pool with
 * {@code auto-commit=false}, never). Spring tells no phase; this listener, added to a
 * transaction manager, marks each of its transactions from just before its commit to its
 * completion. The mark is a transaction synchronization: it is suspended with its
 * transaction, so that a transaction started in the callback ({@code REQUIRES_NEW}) is
 * not marked, and the callback's transaction is marked again when it resumes.
 */
public final class CommittingTransactions implements TransactionExecutionListener {

	private static final CommittingTransactions INSTANCE = new CommittingTransactions();

	/** The key the mark is bound to the thread under. */
	private static final Object KEY = new Object();

	private CommittingTransactions() {
	}

	/**
	 * @return whether the current transaction has begun to commit (only for transaction
	 * managers this listener was {@link #addTo added to})
	 */
	public static boolean committing() {
		return TransactionSynchronizationManager.hasResource(KEY);
	}

	/**
	 * Adds the listener to {@code manager}, once, when it takes listeners.
	 * @param manager a transaction manager
	 * @return {@code manager}
	 */
	public static <T extends TransactionManager> T addTo(T manager) {
		if (manager instanceof ConfigurableTransactionManager configurable
				&& !configurable.getTransactionExecutionListeners().contains(INSTANCE)) {
			configurable.addListener(INSTANCE);
		}
		return manager;
	}

	/**
	 * @return a post-processor that adds the listener to every transaction manager bean
	 * that takes listeners, Boot's and the application's own
	 */
	public static BeanPostProcessor postProcessor() {
		return new BeanPostProcessor() {

			@Override
			public Object postProcessAfterInitialization(Object bean, String beanName) {
				return (bean instanceof TransactionManager manager) ? addTo(manager) : bean;
			}

		};
	}

	/**
	 * A new transaction is not committing: a mark left bound by a transaction whose
	 * completion was never reported (none of Spring's) does not outlive it. A
	 * transaction's own mark is unbound while a transaction started inside it runs.
	 */
	@Override
	public void afterBegin(TransactionExecution transaction, @Nullable Throwable beginFailure) {
		if (beginFailure == null && transaction.isNewTransaction()) {
			TransactionSynchronizationManager.unbindResourceIfPossible(KEY);
		}
	}

	@Override
	public void beforeCommit(TransactionExecution transaction) {
		// a savepoint's release or a participating transaction's end commits nothing
		if (transaction.isNewTransaction() && TransactionSynchronizationManager.isSynchronizationActive()) {
			Mark mark = new Mark();
			TransactionSynchronizationManager.registerSynchronization(mark);
			mark.resume();
		}
	}

	/** The mark of one committing transaction. */
	private static final class Mark implements TransactionSynchronization {

		@Override
		public void suspend() {
			TransactionSynchronizationManager.unbindResourceIfPossible(KEY);
		}

		@Override
		public void resume() {
			TransactionSynchronizationManager.unbindResourceIfPossible(KEY);
			TransactionSynchronizationManager.bindResource(KEY, this);
		}

		@Override
		public void afterCompletion(int status) {
			TransactionSynchronizationManager.unbindResourceIfPossible(KEY);
		}

	}

}
