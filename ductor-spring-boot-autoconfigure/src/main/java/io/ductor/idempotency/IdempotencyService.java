package io.ductor.idempotency;

import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;

import javax.sql.DataSource;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.TransactionStatus;
import org.springframework.transaction.support.TransactionTemplate;

import io.ductor.idempotency.ReserveOutcome.InFlight;
import io.ductor.idempotency.ReserveOutcome.OptedOut;
import io.ductor.idempotency.ReserveOutcome.Reserved;
import io.ductor.idempotency.internal.DuplicateWait.Hold;
import io.ductor.idempotency.internal.DuplicateWait.Look;
import io.ductor.idempotency.internal.DuplicateWait;
import io.ductor.idempotency.internal.IdempotencySettings;
import io.ductor.idempotency.internal.IdempotencyStore;
import io.ductor.idempotency.internal.JsonExecution;
import io.ductor.idempotency.internal.KeyReserver;
import io.ductor.jdbc.internal.DatabaseTransactions;
import io.ductor.jdbc.internal.PostgresNotificationListener;
import io.ductor.json.internal.JsonCodec;
import io.ductor.metrics.internal.DuctorObserver;
import io.ductor.observation.internal.DuctorObservations;

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
public class IdempotencyService {

	/** The notification channel on which settled keys are announced. */
	public static final String CHANNEL = "ductor_idempotency";

	/**
	 * The notification channel on which a duplicate announces that it waits for a key
	 * held by an open transaction of another instance, which it cannot mark as awaited:
	 * the instance holding the key then announces its end on {@value #CHANNEL}.
	 */
	public static final String WAITING_CHANNEL = "ductor_idempotency_waiting";

	private static final Log logger = LogFactory.getLog(IdempotencyService.class);

	private final DataSource dataSource;

	private final IdempotencyStore store;

	private final TransactionTemplate transactions;

	private final JsonCodec json;

	private final IdempotencySettings settings;

	private final KeyReserver reserver;

	private final DuplicateWait wait;

	private final JsonExecution jsonExecution;

	/**
	 * The one-transaction decisions running in this instance, by owner token, each with
	 * the reason its rollback is counted with should it throw:
	 * {@link ReleaseReason#COMPLETION_FAILED} once its {@link #complete} failed, else
	 * {@link ReleaseReason#HANDLER_FAILED}.
	 */
	private final Map<UUID, ReleaseReason> deciding = new ConcurrentHashMap<>();

	private final DuctorObserver observer;

	private final DuctorObservations observations;

	/**
	 * Create the service.
	 * @param dataSource the database holding Ductor's tables
	 * @param transactionManager the transaction manager of that database
	 * @param json the codec for stored headers and {@link #execute} results
	 * @param settings TTLs and the duplicate policy
	 * @param listener wakes parked duplicates when another instance settles their key;
	 * may be {@code null}, then they wake by polling (and at once for keys settled in
	 * this instance)
	 */
	public IdempotencyService(DataSource dataSource, PlatformTransactionManager transactionManager, JsonCodec json,
			IdempotencySettings settings, PostgresNotificationListener listener) {
		this(dataSource, transactionManager, json, settings, listener, DuctorObserver.NOOP);
	}

	/**
	 * Create the service, reporting every reservation to {@code observer}.
	 * @param dataSource the database holding Ductor's tables
	 * @param transactionManager the transaction manager of that database
	 * @param json the codec for stored headers and {@link #execute} results
	 * @param settings TTLs and the duplicate policy
	 * @param listener wakes parked duplicates; may be {@code null}
	 * @param observer what is told about every reservation
	 */
	public IdempotencyService(DataSource dataSource, PlatformTransactionManager transactionManager, JsonCodec json,
			IdempotencySettings settings, PostgresNotificationListener listener, DuctorObserver observer) {
		this(dataSource, transactionManager, json, settings, listener, observer, DuctorObservations.NOOP);
	}

	/**
	 * Create the service, reporting every reservation to {@code observer} and observing
	 * the two-phase reservations while they run.
	 * @param dataSource the database holding Ductor's tables
	 * @param transactionManager the transaction manager of that database
	 * @param json the codec for stored headers and {@link #execute} results
	 * @param settings TTLs and the duplicate policy
	 * @param listener wakes parked duplicates; may be {@code null}
	 * @param observer what is told about every reservation
	 * @param observations where every {@link #reserve(IdempotentRequest, DuplicatePolicy)
	 * reservation} is observed
	 */
	public IdempotencyService(DataSource dataSource, PlatformTransactionManager transactionManager, JsonCodec json,
			IdempotencySettings settings, PostgresNotificationListener listener, DuctorObserver observer,
			DuctorObservations observations) {
		this.observer = observer;
		this.observations = observations;
		this.dataSource = dataSource;
		this.store = new IdempotencyStore(dataSource);
		this.transactions = new TransactionTemplate(transactionManager);
		this.json = json;
		this.settings = settings;
		this.reserver = new KeyReserver(this.store, json, settings.pendingTtl(), settings.lockKeys());
		this.wait = new DuplicateWait(this.store, settings, listener, dataSource);
		this.jsonExecution = new JsonExecution(this, json, settings, this.transactions, observer, dataSource);
	}

	/**
	 * @return the TTLs and policy this service applies
	 */
	public IdempotencySettings settings() {
		return this.settings;
	}

	/**
	 * @return how many duplicates are parked in this service right now, waiting for their
	 * key
	 */
	public int parkedDuplicates() {
		return this.wait.parked();
	}

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
	public ReserveOutcome reserve(String tenantScope, String pool, String key, String fingerprint) {
		return reserve(new IdempotentRequest(tenantScope, pool, key, fingerprint));
	}

	/**
	 * Try once to reserve a key, without waiting.
	 * @param request the request
	 * @return reserved, replay, in-flight, fingerprint mismatch or opted out
	 */
	public ReserveOutcome reserve(IdempotentRequest request) {
		return reserve(request, DuplicatePolicy.REJECT);
	}

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
	public ReserveOutcome reserve(IdempotentRequest request, DuplicatePolicy policy) {
		DuctorObservations.Scope scope = this.observations.reserve();
		try {
			ReserveOutcome outcome = reserveApplying(request, policy);
			String result = KeyReserver.tag(outcome);
			scope.outcome(result);
			this.observer.reservation(result);
			return outcome;
		}
		catch (RuntimeException | Error ex) {
			scope.outcome("error");
			scope.error(ex);
			throw ex;
		}
		finally {
			scope.close();
		}
	}

	/**
	 * One look at the key in the one-transaction form, observed as
	 * {@code ductor.idempotency.reserve} with its outcome: only the reservation, never
	 * the decision that follows it in the same transaction.
	 */
	private ReserveOutcome observedReserveOnce(IdempotentRequest request, boolean last) {
		DuctorObservations.Scope scope = this.observations.reserve();
		try {
			ReserveOutcome outcome = reserveOnce(request, last);
			scope.outcome(KeyReserver.tag(outcome));
			return outcome;
		}
		catch (RuntimeException | Error ex) {
			scope.outcome("error");
			scope.error(ex);
			throw ex;
		}
		finally {
			scope.close();
		}
	}

	private ReserveOutcome reserveApplying(IdempotentRequest request, DuplicatePolicy policy) {
		Objects.requireNonNull(request, "request must not be null");
		if (request.optedOut()) {
			return new OptedOut(request);
		}
		DuplicatePolicy resolved = this.settings.resolve(policy);
		if (DatabaseTransactions.active(this.dataSource)) {
			return this.wait.pollInTransaction(request, resolved, (last) -> reserveOnce(request, last));
		}
		if (resolved == DuplicatePolicy.REJECT) {
			return reserveOnce(request, true);
		}
		return this.wait.awaitSettled(request, (wakeUp, last) -> {
			ReserveOutcome outcome = reserveOnce(request, last);
			return new Look<>(!(outcome instanceof InFlight), () -> outcome);
		}, () -> this.wait.markWaited(request));
	}

	/**
	 * One look at the key. Only the last look before a duplicate answers in flight tells
	 * a key in flight from one whose advisory lock collides with it, and a key this
	 * instance holds needs no telling.
	 */
	private ReserveOutcome reserveOnce(IdempotentRequest request, boolean last) {
		return this.reserver.reserveOnce(request, last && !this.wait.heldHere(request));
	}

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
	public void complete(Reservation reservation, String decisionId, StoredResponse response) {
		Objects.requireNonNull(reservation, "reservation must not be null");
		String headers = (response == null) ? null
				: response.headers().isEmpty() ? "{}" : this.json.write(response.headers(), "stored response headers");
		try {
			if (this.store.complete(reservation, decisionId, response, headers, this.settings.completedTtl()) == 0) {
				throw new ReservationLostException(reservation.request().describe()
						+ " is no longer held by reservation " + reservation.ownerToken()
						+ ": it was pending longer than ductor.idempotency.pending-ttl (" + this.settings.pendingTtl()
						+ "), was released and has been reclaimed by a retry. "
						+ "The outcome was not stored; make the pending TTL longer than the slowest operation");
			}
		}
		catch (RuntimeException ex) {
			// a one-transaction decision rolls back because its completion failed, not
			// its handler
			this.deciding.computeIfPresent(reservation.ownerToken(),
					(token, reason) -> ReleaseReason.COMPLETION_FAILED);
			throw ex;
		}
		this.wait.wakeAfterCommit(reservation.request());
	}

	/**
	 * Release a reservation without a decision ({@code failed_before_commit}), so that a
	 * retry with the same key runs again; waiting duplicates wake and one of them takes
	 * the key over. Counted as {@link ReleaseReason#FAILED_BY_OWNER}.
	 * @param reservation the reservation from {@link #reserve}
	 * @return {@code false} when the reservation was no longer pending under this owner
	 */
	public boolean fail(Reservation reservation) {
		return fail(reservation, ReleaseReason.FAILED_BY_OWNER);
	}

	/**
	 * Release a reservation without a decision, saying why; see
	 * {@link #fail(Reservation)}. The release is logged and counted by
	 * {@code ductor.idempotency.released} with the reason.
	 * @param reservation the reservation from {@link #reserve}
	 * @param reason why it is released
	 * @return {@code false} when the reservation was no longer pending under this owner
	 */
	public boolean fail(Reservation reservation, ReleaseReason reason) {
		Objects.requireNonNull(reservation, "reservation must not be null");
		Objects.requireNonNull(reason, "reason must not be null");
		boolean released = this.store.fail(reservation) == 1;
		if (released) {
			this.observer.released(reason.tag(), 1);
			if (logger.isInfoEnabled()) {
				logger.info("Released " + reservation.request().describe() + " (" + reason.tag()
						+ "): a retry with the key runs again");
			}
			this.wait.wakeAfterCommit(reservation.request());
		}
		return released;
	}

	/**
	 * Roll a one-transaction reservation back together with the work done in its
	 * transaction, saying why: nothing of the decision commits, and the key is free for a
	 * retry. Logged and counted by {@code ductor.idempotency.released} like a release.
	 * @param reservation the reservation handed to {@link TransactionalDecision#reserved}
	 * @param transaction the transaction it was handed with
	 * @param reason why
	 */
	public void rollBack(Reservation reservation, TransactionStatus transaction, ReleaseReason reason) {
		Objects.requireNonNull(reservation, "reservation must not be null");
		Objects.requireNonNull(reason, "reason must not be null");
		transaction.setRollbackOnly();
		releasedByRollback(reservation.request(), reason);
	}

	private void releasedByRollback(IdempotentRequest request, ReleaseReason reason) {
		this.observer.released(reason.tag(), 1);
		if (logger.isInfoEnabled()) {
			logger.info("Rolled back the reservation of " + request.describe() + " with its work (" + reason.tag()
					+ "): a retry with the key runs again");
		}
	}

	/**
	 * Run {@code action} once per key with the configured duplicate policy; see
	 * {@link #execute(IdempotentRequest, DuplicatePolicy, Class, Supplier)}.
	 * @param request the request
	 * @param resultType the result's type, to read a replayed result back
	 * @param action the work, run at most once per key while its decision is valid
	 * @param <T> the result type
	 * @return the result, computed now or replayed
	 */
	public <T> IdempotentResult<T> execute(IdempotentRequest request, Class<T> resultType, Supplier<T> action) {
		return execute(request, DuplicatePolicy.DEFAULT, resultType, action);
	}

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
	public <T> IdempotentResult<T> execute(IdempotentRequest request, DuplicatePolicy policy, Class<T> resultType,
			Supplier<T> action) {
		return this.jsonExecution.execute(request, policy, resultType, action);
	}

	/**
	 * The one-transaction mode with the configured duplicate policy; see
	 * {@link #executeInTransaction(IdempotentRequest, DuplicatePolicy, Class, Supplier)}.
	 * @param request the request
	 * @param resultType the result's type, to read a replayed result back
	 * @param action the work, run inside the transaction
	 * @param <T> the result type
	 * @return the result, committed now or replayed
	 */
	public <T> IdempotentResult<T> executeInTransaction(IdempotentRequest request, Class<T> resultType,
			Supplier<T> action) {
		return executeInTransaction(request, DuplicatePolicy.DEFAULT, resultType, action);
	}

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
	public <T> IdempotentResult<T> executeInTransaction(IdempotentRequest request, DuplicatePolicy policy,
			Class<T> resultType, Supplier<T> action) {
		return this.jsonExecution.executeInTransaction(request, policy, resultType, action);
	}

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
	public <T> T executeInTransaction(IdempotentRequest request, DuplicatePolicy policy,
			TransactionalDecision<T> decision) {
		Objects.requireNonNull(request, "request must not be null");
		Objects.requireNonNull(decision, "decision must not be null");
		if (request.optedOut()) {
			OptedOut optedOut = new OptedOut(request);
			this.observer.reservation(KeyReserver.tag(optedOut));
			return decision.notReserved(optedOut);
		}
		if (DatabaseTransactions.active(this.dataSource)) {
			return this.transactions.execute((status) -> {
				ReserveOutcome outcome = reserve(request, policy);
				return (outcome instanceof Reserved reserved) ? decide(decision, reserved.reservation(), status)
						: decision.notReserved(outcome);
			});
		}
		DuplicatePolicy resolved = this.settings.resolve(policy);
		return this.wait.awaitSettled(request, (wakeUp, last) -> {
			Attempt<T> attempt;
			// set once the decision returned without rolling back: only its commit is
			// left
			AtomicBoolean committing = new AtomicBoolean();
			// set once this attempt holds the key, to announce the end of its hold
			AtomicReference<Hold> hold = new AtomicReference<>();
			try {
				attempt = this.transactions.execute((status) -> {
					ReserveOutcome outcome = observedReserveOnce(request, last || resolved == DuplicatePolicy.REJECT);
					if (!(outcome instanceof Reserved reserved)) {
						// nothing written: this transaction only held the key's lock for
						// a moment
						return new Attempt<T>(outcome, null);
					}
					// the holder is no duplicate: not parked while it decides
					hold.set(this.wait.holdInTransaction(request, wakeUp));
					this.observer.reservation(KeyReserver.tag(outcome));
					T value = decide(decision, reserved.reservation(), status);
					committing.set(!status.isRollbackOnly());
					return new Attempt<>(outcome, value);
				});
			}
			catch (RuntimeException | Error ex) {
				if (committing.get()) {
					// the commit failed: the reservation rolled back with the decision's
					// work
					releasedByRollback(request, ReleaseReason.COMPLETION_FAILED);
				}
				throw ex;
			}
			finally {
				if (hold.get() != null) {
					this.wait.announceEnd(hold.get());
				}
			}
			ReserveOutcome outcome = attempt.outcome();
			if (outcome instanceof Reserved) {
				return new Look<>(true, attempt::value);
			}
			return new Look<>(!(outcome instanceof InFlight) || resolved == DuplicatePolicy.REJECT, () -> {
				this.observer.reservation(KeyReserver.tag(outcome));
				return decision.notReserved(outcome);
			});
		}, () -> this.wait.askHolderToAnnounce(request));
	}

	private <T> T decide(TransactionalDecision<T> decision, Reservation reservation, TransactionStatus status) {
		UUID token = reservation.ownerToken();
		this.deciding.put(token, ReleaseReason.HANDLER_FAILED);
		try {
			return decision.reserved(reservation, status);
		}
		catch (RuntimeException | Error ex) {
			// the transaction rolls back: the reservation goes with the work
			releasedByRollback(reservation.request(), this.deciding.get(token));
			throw ex;
		}
		finally {
			this.deciding.remove(token);
		}
	}

	/**
	 * One try of the one-transaction mode: what the reservation found, and the decision's
	 * result.
	 */
	private record Attempt<T>(ReserveOutcome outcome, T value) {
	}

}
