package io.ductor.idempotency;

import java.util.Locale;

/**
 * Why a pending reservation was released ({@code failed_before_commit}) so that a retry with its
 * key runs again. Each release is logged and counted by {@code ductor.idempotency.released}, tagged
 * with {@link #tag()}.
 */
public enum ReleaseReason {

	/**
	 * The sweeper found it pending past {@code ductor.idempotency.pending-ttl}: its owner crashed,
	 * hung or lost its connection. Only two-phase reservations can be swept, and their decision
	 * may have committed before the owner stopped.
	 */
	SWEPT,

	/** The handler or action threw. */
	HANDLER_FAILED,

	/** The handler answered with a 5xx status. */
	SERVER_ERROR,

	/**
	 * The response must never be replayed: a 401, 403, 407 or 429, or one carrying
	 * {@code Set-Cookie}.
	 */
	NOT_STORABLE,

	/** The response was larger than {@code ductor.idempotency.max-response-size}. */
	TOO_LARGE,

	/** The reservation's owner released it with {@link IdempotencyService#fail(Reservation)}. */
	FAILED_BY_OWNER;

	/** @return the value of the meter's {@code reason} tag: the name in lower case */
	public String tag() {
		return name().toLowerCase(Locale.ROOT);
	}

}
