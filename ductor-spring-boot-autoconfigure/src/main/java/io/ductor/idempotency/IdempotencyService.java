package io.ductor.idempotency;

import java.nio.charset.StandardCharsets;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import javax.sql.DataSource;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.dao.DataAccessException;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.transaction.support.TransactionTemplate;

import io.ductor.idempotency.IdempotencyStore.Row;
import io.ductor.idempotency.ReserveOutcome.Result;
import io.ductor.jdbc.PostgresNotificationListener;
import io.ductor.metrics.DuctorObserver;
import io.ductor.json.JsonCodec;

/**
 * Commits a decision exactly once per idempotency key, over {@code eec_routing_idempotency}
 * keyed by (tenant scope, pool, key).
 * <p>
 * The lifecycle: {@link #reserve reserve} is one {@code INSERT ... ON CONFLICT} that inserts a
 * {@code pending} row with a fresh owner token, or takes over a {@code failed_before_commit} row
 * or a {@code completed} row past its TTL; duplicates find the row taken and get a replay, an
 * in-flight answer or a fingerprint mismatch. The owner then {@link #complete completes} the row
 * (status, decision id, stored response, a fresh TTL) or {@link #fail fails} it so that a retry
 * can reclaim it; both are fenced by the owner token. A reservation whose owner never settles it
 * is released by the sweeper after {@code pending-ttl}. Every time is the database's clock.
 * <p>
 * Outside a transaction each call is one short statement of its own, so no connection or lock
 * is held while the caller decides. Inside a transaction the calls join it: reserve, the
 * caller's own writes and complete then commit together or not at all (the one-transaction mode
 * of {@link #executeInTransaction}), and a duplicate arriving meanwhile waits inside PostgreSQL
 * for that transaction, bounded by the wait timeout.
 * <p>
 * Settlements are announced with {@code pg_notify} on {@value #CHANNEL} in the settling
 * statement; duplicates parked under {@link DuplicatePolicy#WAIT} wake on them and also look
 * again every poll interval.
 */
public class IdempotencyService {

	/** The notification channel on which settled keys are announced. */
	public static final String CHANNEL = "ductor_idempotency";

	private static final int MAX_RESERVE_ATTEMPTS = 10;

	private static final Log logger = LogFactory.getLog(IdempotencyService.class);

	private final IdempotencyStore store;

	private final TransactionTemplate transactions;

	private final JsonCodec json;

	private final IdempotencySettings settings;

	private final DuplicateWaiters waiters = new DuplicateWaiters();

	private final DuctorObserver observer;

	/**
	 * Create the service.
	 * @param dataSource the database holding Ductor's tables
	 * @param transactionManager the transaction manager of that database
	 * @param json the codec for stored headers and {@link #execute} results
	 * @param settings TTLs and the duplicate policy
	 * @param listener wakes parked duplicates when another instance settles their key; may be
	 * {@code null}, then they wake by polling (and at once for keys settled in this instance)
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
		this.observer = observer;
		this.store = new IdempotencyStore(dataSource);
		this.transactions = new TransactionTemplate(transactionManager);
		this.json = json;
		this.settings = settings;
		if (listener != null) {
			listener.subscribe(CHANNEL, this.waiters);
		}
	}

	/** @return the TTLs and policy this service applies */
	public IdempotencySettings settings() {
		return this.settings;
	}

	/** @return how many duplicates are parked in this service right now, waiting for their key */
	public int parkedDuplicates() {
		return this.waiters.parked();
	}

	/**
	 * Try once to reserve a key, without waiting.
	 * @param tenantScope whose key it is ({@code ""} without tenants)
	 * @param pool the kind of operation
	 * @param key the idempotency key; {@code ""} opts out
	 * @param fingerprint what the request asks
	 * @return reserved, replay, in-flight, fingerprint mismatch or opted out
	 * @throws InvalidIdempotencyKeyException for a malformed key, before anything is written
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
	 * {@link DuplicatePolicy#WAIT} the call parks until that request settles and then answers
	 * with its outcome (a replay, or a reservation of its own when the first one failed), or with
	 * in-flight once the wait timeout has passed. Inside a transaction it never parks: a
	 * duplicate of a request whose transaction is still open waits for it inside PostgreSQL
	 * instead, and a duplicate of another instance's pending reservation is in-flight at once.
	 * @param request the request
	 * @param policy the policy, or {@link DuplicatePolicy#DEFAULT} for the configured one
	 * @return reserved, replay, in-flight, fingerprint mismatch or opted out
	 * @throws IdempotencyKeyInFlightException inside a transaction, when the duplicate's wait
	 * for the open transaction outlasted the policy's bound
	 */
	public ReserveOutcome reserve(IdempotentRequest request, DuplicatePolicy policy) {
		ReserveOutcome outcome = reserveApplying(request, policy);
		this.observer.reservation(outcome.result().name().toLowerCase(Locale.ROOT));
		return outcome;
	}

	private ReserveOutcome reserveApplying(IdempotentRequest request, DuplicatePolicy policy) {
		Objects.requireNonNull(request, "request must not be null");
		if (request.optedOut()) {
			return ReserveOutcome.of(Result.OPTED_OUT, request);
		}
		DuplicatePolicy resolved = this.settings.resolve(policy);
		if (TransactionSynchronizationManager.isActualTransactionActive()) {
			return reserveInTransaction(request, resolved);
		}
		if (resolved == DuplicatePolicy.REJECT) {
			return reserveOnce(request);
		}
		long deadline = System.nanoTime() + this.settings.waitTimeout().toNanos();
		boolean announced = false;
		while (true) {
			CountDownLatch wakeUp = this.waiters.register(request.waiterId());
			try {
				ReserveOutcome outcome = reserveOnce(request);
				long left = deadline - System.nanoTime();
				if (outcome.result() != Result.IN_FLIGHT || left <= 0) {
					return outcome;
				}
				if (!announced) {
					// ask the holder to notify when it settles, then look once more: settled meanwhile
					// means no notification is coming, but the second look sees the outcome
					this.store.markWaited(request);
					announced = true;
					continue;
				}
				if (wakeUp.await(Math.min(left, this.settings.pollInterval().toNanos()), TimeUnit.NANOSECONDS)) {
					// settled or released: a reclaim clears the mark, so a new holder must be asked again
					announced = false;
				}
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new IdempotencyKeyInFlightException("Interrupted while waiting for the request holding "
						+ describe(request) + " to finish; retry later with the same key");
			}
			finally {
				this.waiters.unregister(request.waiterId(), wakeUp);
			}
		}
	}

	/**
	 * Complete a reservation: store the decision and its response, replayed to duplicates for
	 * {@code completed-ttl}, and wake the waiting duplicates.
	 * @param reservation the reservation from {@link #reserve}
	 * @param decisionId the decision's id (an order id, a message id), may be {@code null}
	 * @param response what to replay, may be {@code null}
	 * @throws ReservationLostException when the reservation was swept and reclaimed by another
	 * request (or purged) meanwhile: nothing was stored
	 */
	public void complete(Reservation reservation, String decisionId, StoredResponse response) {
		Objects.requireNonNull(reservation, "reservation must not be null");
		String headers = (response == null) ? null
				: response.headers().isEmpty() ? "{}" : this.json.write(response.headers(), "stored response headers");
		if (this.store.complete(reservation, decisionId, response, headers, this.settings.completedTtl()) == 0) {
			throw new ReservationLostException(describe(reservation.request()) + " is no longer held by reservation "
					+ reservation.ownerToken() + ": it was pending longer than ductor.idempotency.pending-ttl ("
					+ this.settings.pendingTtl() + "), was released and has been reclaimed by a retry. "
					+ "The outcome was not stored; make the pending TTL longer than the slowest operation");
		}
		wakeAfterCommit(reservation.request());
	}

	/**
	 * Release a reservation without a decision ({@code failed_before_commit}), so that a retry
	 * with the same key runs again; waiting duplicates wake and one of them takes the key over.
	 * @param reservation the reservation from {@link #reserve}
	 * @return {@code false} when the reservation was no longer pending under this owner
	 */
	public boolean fail(Reservation reservation) {
		Objects.requireNonNull(reservation, "reservation must not be null");
		boolean released = this.store.fail(reservation) == 1;
		if (released) {
			wakeAfterCommit(reservation.request());
		}
		return released;
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
	 * Run {@code action} once per key: reserve, run, then complete with the result as a JSON
	 * body (status 200); a repeated key returns the stored result without running the action.
	 * An action that throws releases the key (a retry runs again) and its exception propagates.
	 * Outside a transaction the action runs with no connection or lock held by this service; a
	 * reservation, the action's own writes and the completion then commit separately. Use
	 * {@link #executeInTransaction} when the action writes to this database.
	 * @param request the request
	 * @param policy what a duplicate of an in-flight request gets
	 * @param resultType the result's type, to read a replayed result back
	 * @param action the work
	 * @param <T> the result type
	 * @return the result, computed now or replayed
	 * @throws IdempotencyKeyInFlightException when another request holds the key (rejected, or
	 * still in flight after the wait timeout)
	 * @throws FingerprintMismatchException when the key was used for another request
	 * @throws ReservationLostException when the action outlasted the pending TTL and a retry took
	 * the key over: the result was not stored
	 */
	public <T> IdempotentResult<T> execute(IdempotentRequest request, DuplicatePolicy policy, Class<T> resultType,
			Supplier<T> action) {
		Objects.requireNonNull(resultType, "resultType must not be null");
		Objects.requireNonNull(action, "action must not be null");
		boolean joined = TransactionSynchronizationManager.isActualTransactionActive();
		ReserveOutcome outcome = reserve(request, policy);
		switch (outcome.result()) {
			case OPTED_OUT:
				return new IdempotentResult<>(action.get(), false, null);
			case REPLAY:
				StoredDecision decision = outcome.decision();
				byte[] body = (decision.response() != null) ? decision.response().body() : new byte[0];
				return new IdempotentResult<>(this.json.read(new String(body, StandardCharsets.UTF_8), resultType,
						"stored result of " + describe(request)), true, decision.decisionId());
			case IN_FLIGHT:
				boolean waited = !joined && this.settings.resolve(policy) == DuplicatePolicy.WAIT;
				throw inFlight(request, waited ? this.settings.waitTimeout() : null);
			case FINGERPRINT_MISMATCH:
				throw mismatch(request);
			default:
				break;
		}
		Reservation reservation = outcome.reservation();
		T value;
		try {
			value = action.get();
		}
		catch (RuntimeException | Error ex) {
			if (!joined) {
				releaseAfterFailure(reservation, ex);
			}
			// joined: the caller's rollback removes the reservation with the action's writes
			throw ex;
		}
		String decisionId = reservation.ownerToken().toString();
		byte[] result = this.json.write(value, "result of " + describe(request)).getBytes(StandardCharsets.UTF_8);
		complete(reservation, decisionId,
				new StoredResponse(200, Map.of("Content-Type", List.of("application/json")), result));
		return new IdempotentResult<>(value, false, decisionId);
	}

	/**
	 * The one-transaction mode, for an action whose effect is a write to this database: the
	 * reservation, the action's writes and the completed record commit together in one
	 * transaction (joining the caller's when there is one), or not at all. A repeated key returns
	 * the saved result without running the action; a duplicate arriving while the first
	 * transaction is open waits for it (bounded by the wait timeout, or not at all under
	 * {@link DuplicatePolicy#REJECT}).
	 * @param request the request
	 * @param resultType the result's type, to read a replayed result back
	 * @param action the work, run inside the transaction
	 * @param <T> the result type
	 * @return the result, committed now or replayed
	 */
	public <T> IdempotentResult<T> executeInTransaction(IdempotentRequest request, Class<T> resultType,
			Supplier<T> action) {
		return this.transactions.execute((status) -> execute(request, DuplicatePolicy.DEFAULT, resultType, action));
	}

	/**
	 * The error for a duplicate of an in-flight request.
	 * @param request the duplicate
	 * @param waited how long it waited, or {@code null} when it was rejected at once
	 * @return the exception, to throw
	 */
	public static IdempotencyKeyInFlightException inFlight(IdempotentRequest request, Duration waited) {
		return new IdempotencyKeyInFlightException((waited != null)
				? describe(request) + " was still being processed by an earlier request after waiting " + waited
						+ " (ductor.idempotency.wait-timeout); retry later with the same key"
				: describe(request) + " is being processed by an earlier request and duplicates are rejected"
						+ " (duplicate policy REJECT); retry later with the same key");
	}

	/**
	 * The error for a key reused with another request.
	 * @param request the request reusing the key
	 * @return the exception, to throw
	 */
	public static FingerprintMismatchException mismatch(IdempotentRequest request) {
		return new FingerprintMismatchException(describe(request)
				+ " was already used for a different request; a new request needs a new key");
	}

	private ReserveOutcome reserveInTransaction(IdempotentRequest request, DuplicatePolicy policy) {
		String previous = this.store.lockTimeout();
		this.store.setLocalLockTimeout((policy == DuplicatePolicy.REJECT) ? "1ms"
				: Math.max(1, this.settings.waitTimeout().toMillis()) + "ms");
		ReserveOutcome outcome;
		try {
			outcome = reserveOnce(request);
		}
		catch (DataAccessException ex) {
			if (!isLockTimeout(ex)) {
				throw ex;
			}
			throw new IdempotencyKeyInFlightException(describe(request) + " is held by a transaction that is still"
					+ " open (waited up to " + ((policy == DuplicatePolicy.REJECT) ? "1ms, duplicate policy REJECT"
							: this.settings.waitTimeout() + ", ductor.idempotency.wait-timeout")
					+ "); the current transaction must roll back, then retry with the same key");
		}
		this.store.setLocalLockTimeout(previous);
		return outcome;
	}

	private static boolean isLockTimeout(DataAccessException ex) {
		return ex.getMostSpecificCause() instanceof SQLException sql && "55P03".equals(sql.getSQLState());
	}

	private ReserveOutcome reserveOnce(IdempotentRequest request) {
		for (int attempt = 1; attempt <= MAX_RESERVE_ATTEMPTS; attempt++) {
			UUID token = UUID.randomUUID();
			if (this.store.reserveNew(request, token, this.settings.pendingTtl())) {
				return new ReserveOutcome(Result.RESERVED, request, new Reservation(request, token), null);
			}
			Row row = this.store.find(request).orElse(null);
			if (row == null) {
				continue; // purged between the two statements
			}
			if (row.reclaimable()) {
				if (this.store.reserveOrReclaim(request, token, this.settings.pendingTtl())) {
					return new ReserveOutcome(Result.RESERVED, request, new Reservation(request, token), null);
				}
				continue; // another request took it first
			}
			if (!row.fingerprint().equals(request.fingerprint())) {
				return ReserveOutcome.of(Result.FINGERPRINT_MISMATCH, request);
			}
			if ("pending".equals(row.status())) {
				return ReserveOutcome.of(Result.IN_FLIGHT, request);
			}
			return new ReserveOutcome(Result.REPLAY, request, null, decision(row));
		}
		// the key changed hands under us every time: as good as in flight
		return ReserveOutcome.of(Result.IN_FLIGHT, request);
	}

	@SuppressWarnings("unchecked")
	private StoredDecision decision(Row row) {
		StoredResponse response = null;
		if (row.responseStatus() != null) {
			Map<String, List<String>> headers = (row.headersJson() != null)
					? this.json.read(row.headersJson(), Map.class, "stored response headers") : Map.of();
			response = new StoredResponse(row.responseStatus(), headers, row.body());
		}
		return new StoredDecision(row.decisionId(), response, row.updatedAt(), row.expiresAt());
	}

	private void releaseAfterFailure(Reservation reservation, Throwable failure) {
		try {
			fail(reservation);
		}
		catch (RuntimeException ex) {
			// the sweeper releases it after pending-ttl
			failure.addSuppressed(ex);
			logger.warn("Could not release " + describe(reservation.request()) + " after its action failed; it is"
					+ " released by the sweeper after ductor.idempotency.pending-ttl", ex);
		}
	}

	private void wakeAfterCommit(IdempotentRequest request) {
		if (!TransactionSynchronizationManager.isSynchronizationActive()) {
			this.waiters.wake(request.waiterId());
			return;
		}
		TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {

			@Override
			public void afterCompletion(int status) {
				IdempotencyService.this.waiters.wake(request.waiterId());
			}

		});
	}

	static String describe(IdempotentRequest request) {
		return "Idempotency key '" + request.key() + "' (pool '" + request.pool() + "'"
				+ (request.tenantScope().isEmpty() ? "" : ", tenant '" + request.tenantScope() + "'") + ")";
	}

}
