package io.ductor.worker.internal;

/**
 * Deletes one bounded batch of rows that are past their retention. Each feature that
 * keeps finished rows (effect intents, idempotency records) contributes one; the
 * retention worker runs them all.
 */
@FunctionalInterface
public interface RetentionPurger {

	/**
	 * Delete at most {@code batchSize} expired rows, in a short transaction of their own.
	 * @param batchSize the most rows to delete
	 * @return how many rows were deleted
	 */
	int purge(int batchSize);

}
