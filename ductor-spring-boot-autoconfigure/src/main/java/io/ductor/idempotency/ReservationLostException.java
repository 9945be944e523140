package io.ductor.idempotency;

import io.ductor.DuctorException;

/**
 * A reservation could not be completed because it is no longer its owner's: it stayed
 * pending past {@code ductor.idempotency.pending-ttl}, was swept and has been reclaimed
 * by a retry (or purged). The old owner's outcome was not stored. Make the pending TTL
 * longer than the slowest protected operation.
 */
public class ReservationLostException extends DuctorException {

	public ReservationLostException(String message) {
		super(message);
	}

}
