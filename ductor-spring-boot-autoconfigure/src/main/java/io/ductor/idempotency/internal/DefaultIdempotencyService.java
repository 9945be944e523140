package io.ductor.idempotency.internal;

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
import org.jspecify.annotations.Nullable;

import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.TransactionStatus;
import org.springframework.transaction.support.TransactionTemplate;

import io.ductor.idempotency.DuplicatePolicy;
import io.ductor.idempotency.IdempotencyKeyInFlightException;
import io.ductor.idempotency.IdempotencyService;
import io.ductor.idempotency.IdempotentRequest;
import io.ductor.idempotency.IdempotentResult;
import io.ductor.idempotency.InvalidIdempotencyKeyException;
import io.ductor.idempotency.ReleaseReason;
import io.ductor.idempotency.Reservation;
import io.ductor.idempotency.ReservationLostException;
import io.ductor.idempotency.ReserveOutcome.InFlight;
import io.ductor.idempotency.ReserveOutcome.OptedOut;
import io.ductor.idempotency.ReserveOutcome.Reserved;
import io.ductor.idempotency.ReserveOutcome;
import io.ductor.idempotency.StoredDecision;
import io.ductor.idempotency.StoredResponse;
import io.ductor.idempotency.TransactionalDecision;
import io.ductor.idempotency.internal.DuplicateWait.Hold;
import io.ductor.idempotency.internal.DuplicateWait.Look;
import io.ductor.jdbc.internal.DatabaseTransactions;
import io.ductor.jdbc.internal.PostgresNotificationListener;
import io.ductor.json.internal.JsonCodec;
import io.ductor.metrics.internal.DuctorObserver;
import io.ductor.observation.internal.DuctorInstrumentation;
import io.ductor.observation.internal.DuctorObservations;

/**
 * Ductor's {@link IdempotencyService}, over {@code eec_routing_idempotency}.
 */
public final class DefaultIdempotencyService implements IdempotencyService {

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
	 * Create the service, reporting every reservation to {@code observer} and observing
	 * the two-phase reservations while they run.
	 * @param dataSource the database holding Ductor's tables
	 * @param transactionManager the transaction manager of that database
	 * @param store the SQL of idempotency records, on that database
	 * @param json the codec for stored headers and {@link #execute} results
	 * @param settings TTLs and the duplicate policy
	 * @param listener wakes parked duplicates; may be {@code null}
	 * @param instrumentation the meters and observations of its work
	 */
	public DefaultIdempotencyService(DataSource dataSource, PlatformTransactionManager transactionManager,
			IdempotencyStore store, JsonCodec json, IdempotencySettings settings, PostgresNotificationListener listener,
			DuctorInstrumentation instrumentation) {
		this.observer = instrumentation.metrics();
		this.observations = instrumentation.observations();
		this.dataSource = dataSource;
		this.store = store;
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

	@Override
	public int parkedDuplicates() {
		return this.wait.parked();
	}

	@Override
	public ReserveOutcome reserve(String tenantScope, String pool, String key, String fingerprint) {
		return reserve(new IdempotentRequest(tenantScope, pool, key, fingerprint));
	}

	@Override
	public ReserveOutcome reserve(IdempotentRequest request) {
		return reserve(request, DuplicatePolicy.REJECT);
	}

	@Override
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

	@Override
	public void complete(Reservation reservation, @Nullable String decisionId, @Nullable StoredResponse response) {
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

	@Override
	public boolean fail(Reservation reservation) {
		return fail(reservation, ReleaseReason.FAILED_BY_OWNER);
	}

	@Override
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

	@Override
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

	@Override
	public <T> IdempotentResult<T> execute(IdempotentRequest request, Class<T> resultType, Supplier<T> action) {
		return execute(request, DuplicatePolicy.DEFAULT, resultType, action);
	}

	@Override
	public <T> IdempotentResult<T> execute(IdempotentRequest request, DuplicatePolicy policy, Class<T> resultType,
			Supplier<T> action) {
		return this.jsonExecution.execute(request, policy, resultType, action);
	}

	@Override
	public <T> IdempotentResult<T> executeInTransaction(IdempotentRequest request, Class<T> resultType,
			Supplier<T> action) {
		return executeInTransaction(request, DuplicatePolicy.DEFAULT, resultType, action);
	}

	@Override
	public <T> IdempotentResult<T> executeInTransaction(IdempotentRequest request, DuplicatePolicy policy,
			Class<T> resultType, Supplier<T> action) {
		return this.jsonExecution.executeInTransaction(request, policy, resultType, action);
	}

	@Override
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
