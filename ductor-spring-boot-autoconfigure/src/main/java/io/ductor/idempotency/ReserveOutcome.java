package io.ductor.idempotency;

/**
 * What {@link IdempotencyService#reserve} found.
 *
 * @param result what happened
 * @param request the request
 * @param reservation the reservation, only for {@link Result#RESERVED}
 * @param decision the stored decision, only for {@link Result#REPLAY}
 */
public record ReserveOutcome(Result result, IdempotentRequest request, Reservation reservation,
		StoredDecision decision) {

	/**
	 * The outcomes of a reservation.
	 */
	public enum Result {

		/** The caller owns the key now: decide, then complete or fail the reservation. */
		RESERVED,

		/** The key was decided before, for the same request: answer with the stored decision. */
		REPLAY,

		/** Another caller holds the key and has not settled it yet. */
		IN_FLIGHT,

		/** The key is held or was decided for a request with another fingerprint. */
		FINGERPRINT_MISMATCH,

		/** The key is empty: nothing was reserved, the request is simply processed. */
		OPTED_OUT

	}

	static ReserveOutcome of(Result result, IdempotentRequest request) {
		return new ReserveOutcome(result, request, null, null);
	}

}
