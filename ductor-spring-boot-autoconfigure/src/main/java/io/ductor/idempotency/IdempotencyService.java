package io.ductor.idempotency;

import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;

import org.springframework.transaction.TransactionStatus;

/**
 * Commits a decision exactly once per idempotency key, over
 * {@code eec_routing_idempotency} keyed by (tenant scope, pool, key).
 * <p>
 * The lifecycle: {@link #reserve reserve} is one {@code INSERT ... ON CONFLICT} that
 * inserts a {@code pending} row with a fresh owner token, or takes over a
 * {@code failed_before_commit} row or a {@code completed} row past its TTL; duplicates
 * find the row taken and get a replay, an in-flight answer or a fingerprint mismatch. The
 * owner then {@link #complete completes} the row (status, decision id, stored response, a
 * fresh TTL) or {@link #fail fails} it so that a retry can reclaim it; both are fenced by
 * the owner token. Every time is the database's clock.
 * <p>
 * Two modes:
 * <ul>
 * <li><b>One transaction</b> ({@link #executeInTransaction}): the reservation, the
 * caller's own writes and the completed record commit together, or not at all. A crash or
 * a lost connection before the commit leaves no trace, so a retry runs cleanly; after it,
 * a retry is a replay. This is the form for anything whose effect is a write to this
 * database (a message listener, an import). The reservation takes the key's advisory lock
 * ({@code pg_try_advisory_xact_lock}) before it writes, so a duplicate never waits inside
 * PostgreSQL for the open transaction: it finds the lock taken, is in flight, and (in a
 * transaction of its own) rolls back, returning its connection, and waits outside any
 * transaction.</li>
 * <li><b>Two-phase</b> ({@link #execute}, or {@link #reserve}, {@link #complete} and
 * {@link #fail} called outside a transaction): each call is one short statement that
 * commits at once, so no connection is held while the action runs, for actions that call
 * other systems. Its crash window: an owner that stops after its work committed but
 * before {@link #complete} leaves the reservation pending; the sweeper releases it after
 * {@code pending-ttl} and a retry runs the work again.</li>
 * </ul>
 * <p>
 * Settlements are announced with {@code pg_notify} on {@value #CHANNEL} in the settling
 * statement when a duplicate marked the pending row as awaited; duplicates parked under
 * {@link DuplicatePolicy#WAIT} wake on them, at once for keys settled in this instance
 * (also by a rollback), and look again every poll interval. A duplicate of another
 * instance's open one-transaction request cannot see (or mark) its row yet: it announces
 * that it waits on {@value #WAITING_CHANNEL}, and the holder's instance notifies
 * {@value #CHANNEL} once that transaction has ended (polling remains the fallback when
 * either instance has no listener).
 * <p>
 * Every release of a pending reservation is logged and counted with its
 * {@link ReleaseReason}.
 */
public interface IdempotencyService {

	/** The notification channel on which settled keys are announced. */
	String CHANNEL = "ductor_idempotency";

	/**
	 * The notification channel on which a duplicate announces that it waits for a key
	 * held by an open transaction of another instance, which it cannot mark as awaited:
	 * the instance holding the key then announces its end on {@value #CHANNEL}.
	 */
	String WAITING_CHANNEL = "ductor_idempotency_waiting";

	/**
	 * @return how many duplicates are parked in this service right now, waiting for their
	 * key
	 */
	int parkedDuplicates();

	/**
	 * Try once to reserve a key, without waiting.
	 * @param tenantScope whose key it is ({@code ""} without tenants)
	 * @param pool the kind of operation
	 * @param key the idempotency key; {@code ""} opts out
	 * @param fingerprint what the request asks
	 * @return reserved, replay, in-flight, fingerprint mismatch or opted out
	 * @throws InvalidIdempotencyKeyException for a malformed key, before anything is
	 * written
	 */
	ReserveOutcome reserve(String tenantScope, String pool, String key, String fingerprint);

	/**
	 * Try once to reserve a key, without waiting.
	 * @param request the request
	 * @return reserved, replay, in-flight, fingerprint mismatch or opted out
	 */
	ReserveOutcome reserve(IdempotentRequest request);

	/**
	 * Reserve a key, applying a duplicate policy when another request holds it: under
	 * {@link DuplicatePolicy#WAIT} the call parks until that request settles and then
	 * answers with its outcome (a replay, or a reservation of its own when the first one
	 * failed), or with in-flight once the wait timeout has passed. Outside a transaction
	 * it parks holding no connection. Inside the caller's transaction on this database
	 * (one holding a connection of its {@code DataSource}) the reservation joins it (and
	 * commits or rolls back with it); a duplicate of a request whose transaction is still
	 * open never waits inside PostgreSQL for it (the key's advisory lock tells it the key
	 * is taken) but looks again, holding the caller's connection, until the wait timeout.
	 * @param request the request
	 * @param policy the policy, or {@link DuplicatePolicy#DEFAULT} for the configured one
	 * @return reserved, replay, in-flight, fingerprint mismatch or opted out
	 */
	ReserveOutcome reserve(IdempotentRequest request, DuplicatePolicy policy);

	/**
	 * Complete a reservation: store the decision and its response, replayed to duplicates
	 * for {@code completed-ttl}, and wake the waiting duplicates.
	 * @param reservation the reservation from {@link #reserve}
	 * @param decisionId the decision's id (an order id, a message id), may be
	 * {@code null}
	 * @param response what to replay, may be {@code null}
	 * @throws ReservationLostException when the reservation was swept and reclaimed by
	 * another request (or purged) meanwhile: nothing was stored
	 */
	void complete(Reservation reservation, @Nullable String decisionId, @Nullable StoredResponse response);

	/**
	 * Release a reservation without a decision ({@code failed_before_commit}), so that a
	 * retry with the same key runs again; waiting duplicates wake and one of them takes
	 * the key over. Counted as {@link ReleaseReason#FAILED_BY_OWNER}.
	 * @param reservation the reservation from {@link #reserve}
	 * @return {@code false} when the reservation was no longer pending under this owner
	 */
	boolean fail(Reservation reservation);

	/**
	 * Release a reservation without a decision, saying why; see
	 * {@link #fail(Reservation)}. The release is logged and counted by
	 * {@code ductor.idempotency.released} with the reason.
	 * @param reservation the reservation from {@link #reserve}
	 * @param reason why it is released
	 * @return {@code false} when the reservation was no longer pending under this owner
	 */
	boolean fail(Reservation reservation, ReleaseReason reason);

	/**
	 * Roll a one-transaction reservation back together with the work done in its
	 * transaction, saying why: nothing of the decision commits, and the key is free for a
	 * retry. Logged and counted by {@code ductor.idempotency.released} like a release.
	 * @param reservation the reservation handed to {@link TransactionalDecision#reserved}
	 * @param transaction the transaction it was handed with
	 * @param reason why
	 */
	void rollBack(Reservation reservation, TransactionStatus transaction, ReleaseReason reason);

	/**
	 * Run {@code action} once per key with the configured duplicate policy; see
	 * {@link #execute(IdempotentRequest, DuplicatePolicy, Class, Supplier)}.
	 * @param request the request
	 * @param resultType the result's type, to read a replayed result back
	 * @param action the work, run at most once per key while its decision is valid
	 * @param <T> the result type
	 * @return the result, computed now or replayed
	 */
	<T> IdempotentResult<T> execute(IdempotentRequest request, Class<T> resultType, Supplier<T> action);

	/**
	 * The two-phase mode: reserve, run {@code action}, then complete with the result as a
	 * JSON body (status 200); a repeated key returns the stored result without running
	 * the action. An action that throws releases the key (a retry runs again) and its
	 * exception propagates. Outside a transaction the action runs with no connection or
	 * lock held by this service; the reservation, the action's own writes and the
	 * completion then commit separately, so a crash after the action's effect and before
	 * the completion leaves the key pending until the sweeper releases it after
	 * {@code pending-ttl}, and a retry runs the action again. Use it for actions that
	 * call other systems (and pass them the key); use {@link #executeInTransaction} when
	 * the action writes to this database. Called inside a transaction of this database
	 * (one holding a connection of its {@code DataSource}) it joins it, like
	 * {@link #executeInTransaction}, and an action that throws releases the key in it, so
	 * a caller that goes on and commits leaves the key free; a transaction of another
	 * transaction manager only (a message broker's) is none.
	 * @param request the request
	 * @param policy what a duplicate of an in-flight request gets
	 * @param resultType the result's type, to read a replayed result back
	 * @param action the work
	 * @param <T> the result type
	 * @return the result, computed now or replayed
	 * @throws IdempotencyKeyInFlightException when another request holds the key
	 * (rejected, or still in flight after the wait timeout)
	 * @throws io.ductor.IdempotencyKeyReuseException when the key was used for another
	 * request
	 * @throws ReservationLostException when the action outlasted the pending TTL and a
	 * retry took the key over: the result was not stored
	 */
	<T> IdempotentResult<T> execute(IdempotentRequest request, DuplicatePolicy policy, Class<T> resultType,
			Supplier<T> action);

	/**
	 * The one-transaction mode with the configured duplicate policy; see
	 * {@link #executeInTransaction(IdempotentRequest, DuplicatePolicy, Class, Supplier)}.
	 * @param request the request
	 * @param resultType the result's type, to read a replayed result back
	 * @param action the work, run inside the transaction
	 * @param <T> the result type
	 * @return the result, committed now or replayed
	 */
	<T> IdempotentResult<T> executeInTransaction(IdempotentRequest request, Class<T> resultType, Supplier<T> action);

	/**
	 * The one-transaction mode, for an action whose effect is a write to this database
	 * (the way to use this service from a message listener): the reservation, the
	 * action's writes and the completed record, with the result as a JSON body, commit
	 * together in one transaction, or not at all. An action that throws, a failed commit
	 * or a crash rolls everything back, so the key stays free and a retry runs the action
	 * cleanly; a repeated key after the commit returns the saved result without running
	 * it. See
	 * {@link #executeInTransaction(IdempotentRequest, DuplicatePolicy, TransactionalDecision)}
	 * for how duplicates wait.
	 * @param request the request
	 * @param policy what a duplicate of an in-flight request gets
	 * @param resultType the result's type, to read a replayed result back
	 * @param action the work, run inside the transaction
	 * @param <T> the result type
	 * @return the result, committed now or replayed
	 * @throws IdempotencyKeyInFlightException when another request holds the key
	 * (rejected, or still in flight after the wait timeout)
	 * @throws io.ductor.IdempotencyKeyReuseException when the key was used for another
	 * request
	 */
	<T> IdempotentResult<T> executeInTransaction(IdempotentRequest request, DuplicatePolicy policy, Class<T> resultType,
			Supplier<T> action);

	/**
	 * The one-transaction mode for callers that build their own answers. Opens a
	 * transaction with the application's transaction manager (or joins the caller's),
	 * reserves the key in it and hands the reservation to
	 * {@link TransactionalDecision#reserved}; the reservation, the work and the completed
	 * record then commit together, or not at all.
	 * <p>
	 * When another request holds the key, this request is in flight. In a transaction of
	 * its own, it rolls that transaction back (the connection returns to the pool) and,
	 * under {@link DuplicatePolicy#WAIT}, parks outside any transaction until the holder
	 * settles (woken at once when the holder is in this instance, by notification or
	 * polling every {@code poll-interval} otherwise), then tries again, up to
	 * {@code wait-timeout}. So a storm of duplicates holds one connection, the holder's,
	 * not one each. Joined to a caller's transaction it cannot roll back: it polls inside
	 * that transaction, holding the caller's connection while it waits.
	 * <p>
	 * Work the decision does in a transaction of its own ({@code REQUIRES_NEW}, or with
	 * another transaction manager) commits separately and is not covered: it stays when
	 * the decision rolls back.
	 * @param request the request
	 * @param policy what a duplicate of an in-flight request gets
	 * @param decision the work, and what to make of an outcome without a reservation
	 * @param <T> the result type
	 * @return the result of the decision
	 * @throws org.springframework.transaction.TransactionException when the commit
	 * failed: nothing was stored, the key is free
	 */
	<T> T executeInTransaction(IdempotentRequest request, DuplicatePolicy policy, TransactionalDecision<T> decision);

}
