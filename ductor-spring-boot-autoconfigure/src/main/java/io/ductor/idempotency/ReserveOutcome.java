package io.ductor.idempotency;

import java.time.Duration;

import org.jspecify.annotations.Nullable;

import io.ductor.IdempotencyKeyReuseException;

/**
 * What {@link IdempotencyService#reserve} found: one record per result, each carrying
 * only what that result has.
 */
public sealed interface ReserveOutcome {

	/**
	 * @return the request that was reserved or answered
	 */
	IdempotentRequest request();

	/**
	 * The caller owns the key now: decide, then complete or fail the reservation.
	 *
	 * @param reservation the reservation, with its owner token
	 */
	record Reserved(Reservation reservation) implements ReserveOutcome {

		@Override
		public IdempotentRequest request() {
			return this.reservation.request();
		}

	}

	/**
	 * The key was decided before, for the same request: answer with the stored decision.
	 *
	 * @param request the request
	 * @param decision the stored decision and its response
	 */
	record Replay(IdempotentRequest request, StoredDecision decision) implements ReserveOutcome {
	}

	/**
	 * Another caller holds the key and has not settled it yet.
	 *
	 * @param request the request
	 */
	record InFlight(IdempotentRequest request) implements ReserveOutcome {

		/**
		 * The error for this duplicate of an in-flight request.
		 * @param waited how long it waited, or {@code null} when it was rejected at once
		 * @return the exception, to throw
		 */
		public IdempotencyKeyInFlightException exception(@Nullable Duration waited) {
			return new IdempotencyKeyInFlightException((waited != null)
					? this.request.describe() + " was still being processed by an earlier request after waiting "
							+ waited + " (ductor.idempotency.wait-timeout); retry later with the same key"
					: this.request.describe() + " is being processed by an earlier request and duplicates are"
							+ " rejected (duplicate policy REJECT); retry later with the same key");
		}

	}

	/**
	 * The key is held or was decided for a request with another fingerprint.
	 *
	 * @param request the request reusing the key
	 */
	record FingerprintMismatch(IdempotentRequest request) implements ReserveOutcome {

		/**
		 * @return the error for this reuse of a key, to throw
		 */
		public IdempotencyKeyReuseException exception() {
			return new IdempotencyKeyReuseException(this.request.describe()
					+ " was already used for a different request; a new request needs a new key");
		}

	}

	/**
	 * The key is empty: nothing was reserved, the request is simply processed.
	 *
	 * @param request the request
	 */
	record OptedOut(IdempotentRequest request) implements ReserveOutcome {
	}

}
