package io.ductor.idempotency;

import org.springframework.transaction.TransactionStatus;

/**
 * The work of a one-transaction decision, for callers that build their own answers (the
 * {@code @Idempotent} filter, a message listener with its own acknowledgement): see
 * {@link IdempotencyService#executeInTransaction(IdempotentRequest, DuplicatePolicy, TransactionalDecision)}.
 *
 * @param <T> what the caller makes of the outcome
 */
public interface TransactionalDecision<T> {

	/**
	 * The key is reserved in the open transaction: do the work in it and
	 * {@link IdempotencyService#complete complete} the reservation in it. Throw, or call
	 * {@link TransactionStatus#setRollbackOnly()}, to roll everything back: the
	 * reservation goes with the work, and the key is free for a retry.
	 * @param reservation the reservation, held by this transaction
	 * @param transaction the open transaction
	 * @return the result, returned once the transaction has committed
	 */
	T reserved(Reservation reservation, TransactionStatus transaction);

	/**
	 * The key was not reserved: a replay, a fingerprint mismatch, an opted-out request,
	 * or in flight (at once under {@link DuplicatePolicy#REJECT}, after the wait timeout
	 * under {@link DuplicatePolicy#WAIT}). Called after the reserving transaction ended,
	 * with no connection held by the service.
	 * @param outcome what the reservation found
	 * @return the result
	 */
	T notReserved(ReserveOutcome outcome);

}
