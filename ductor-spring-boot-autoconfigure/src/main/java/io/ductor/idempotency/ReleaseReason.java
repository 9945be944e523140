package io.ductor.idempotency;

import java.util.Locale;

/**
 * Why a reservation was released so that a retry with its key runs again: a two-phase one
 * moved to {@code failed_before_commit}, a one-transaction one rolled back with the
 * handler's work. Each release is logged and counted by
 * {@code ductor.idempotency.released}, tagged with {@link #tag()}.
 */
public enum ReleaseReason {

	/**
	 * The sweeper found it pending past {@code ductor.idempotency.pending-ttl}: its owner
	 * crashed, hung or lost its connection. Only two-phase reservations can be swept, and
	 * their decision may have committed before the owner stopped.
	 */
	SWEPT,

	/**
	 * The handler or action threw, also when the application answered the exception (an
	 * {@code @ExceptionHandler}, a {@code ProblemDetail}).
	 */
	HANDLER_FAILED,

	/**
	 * One-transaction mode: the handler answered, but storing its decision failed, the
	 * completion statement or the commit (a lost connection, a deferred constraint of the
	 * handler's writes, a full disk), so the reservation rolled back with the handler's
	 * work.
	 */
	COMPLETION_FAILED,

	/**
	 * One-transaction mode: the handler's own transactional work marked the transaction
	 * rollback-only (a joined {@code @Transactional} method threw, and the handler
	 * answered anyway), so nothing could be stored; the answer is sent unstored.
	 */
	ROLLED_BACK,

	/** The handler answered with a 5xx status. */
	SERVER_ERROR,

	/**
	 * The response must never be replayed: a 401, 403, 407 or 429, one whose handler set
	 * a cookie ({@code Set-Cookie}), or an error the container renders after the filter
	 * ({@code sendError}).
	 */
	NOT_STORABLE,

	/** The response was larger than {@code ductor.idempotency.max-response-size}. */
	TOO_LARGE,

	/**
	 * The reservation's owner released it with
	 * {@link IdempotencyService#fail(Reservation)}.
	 */
	FAILED_BY_OWNER;

	/**
	 * @return the value of the meter's {@code reason} tag: the name in lower case
	 */
	public String tag() {
		return name().toLowerCase(Locale.ROOT);
	}

}
