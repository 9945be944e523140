package io.ductor.idempotency.internal;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Supplier;

import javax.sql.DataSource;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.transaction.TransactionStatus;
import org.springframework.transaction.support.TransactionTemplate;

import io.ductor.idempotency.DuplicatePolicy;
import io.ductor.idempotency.IdempotencyService;
import io.ductor.idempotency.IdempotentRequest;
import io.ductor.idempotency.IdempotentResult;
import io.ductor.idempotency.ReleaseReason;
import io.ductor.idempotency.Reservation;
import io.ductor.idempotency.ReserveOutcome.FingerprintMismatch;
import io.ductor.idempotency.ReserveOutcome.InFlight;
import io.ductor.idempotency.ReserveOutcome.OptedOut;
import io.ductor.idempotency.ReserveOutcome.Replay;
import io.ductor.idempotency.ReserveOutcome.Reserved;
import io.ductor.idempotency.ReserveOutcome;
import io.ductor.idempotency.StoredDecision;
import io.ductor.idempotency.StoredResponse;
import io.ductor.idempotency.TransactionalDecision;
import io.ductor.jdbc.internal.DatabaseTransactions;
import io.ductor.json.internal.JsonCodec;
import io.ductor.metrics.internal.DuctorObserver;

/**
 * The execute template of {@link IdempotencyService}: runs an action once per key and
 * stores its result as a JSON body (status 200), which a replay reads back into the
 * result type; a duplicate in flight or a reused key becomes an exception.
 */
public final class JsonExecution {

	private static final Log logger = LogFactory.getLog(IdempotencyService.class);

	private final IdempotencyService service;

	private final JsonCodec json;

	private final IdempotencySettings settings;

	private final TransactionTemplate transactions;

	private final DuctorObserver observer;

	/** The database whose transactions a call joins. */
	private final DataSource dataSource;

	public JsonExecution(IdempotencyService service, JsonCodec json, IdempotencySettings settings,
			TransactionTemplate transactions, DuctorObserver observer, DataSource dataSource) {
		this.dataSource = dataSource;
		this.service = service;
		this.json = json;
		this.settings = settings;
		this.transactions = transactions;
		this.observer = observer;
	}

	/**
	 * See
	 * {@link IdempotencyService#execute(IdempotentRequest, DuplicatePolicy, Class, Supplier)}.
	 */
	public <T> IdempotentResult<T> execute(IdempotentRequest request, DuplicatePolicy policy, Class<T> resultType,
			Supplier<T> action) {
		Objects.requireNonNull(resultType, "resultType must not be null");
		Objects.requireNonNull(action, "action must not be null");
		boolean joined = DatabaseTransactions.active(this.dataSource);
		ReserveOutcome outcome = this.service.reserve(request, policy);
		if (outcome instanceof OptedOut) {
			return new IdempotentResult<>(action.get(), false, null);
		}
		if (!(outcome instanceof Reserved reserved)) {
			return answer(outcome, policy, resultType, joined);
		}
		Reservation reservation = reserved.reservation();
		T value;
		try {
			value = action.get();
		}
		catch (RuntimeException | Error ex) {
			// joined, the release is part of the caller's transaction: a caller that
			// rolls back removes the reservation with it, one that goes on and commits
			// leaves the key free, never pending
			releaseAfterFailure(reservation, ex, joined);
			throw ex;
		}
		String decisionId = reservation.ownerToken().toString();
		this.service.complete(reservation, decisionId, response(request, value));
		return new IdempotentResult<>(value, false, decisionId);
	}

	/**
	 * See
	 * {@link IdempotencyService#executeInTransaction(IdempotentRequest, DuplicatePolicy, Class, Supplier)}.
	 */
	public <T> IdempotentResult<T> executeInTransaction(IdempotentRequest request, DuplicatePolicy policy,
			Class<T> resultType, Supplier<T> action) {
		Objects.requireNonNull(request, "request must not be null");
		Objects.requireNonNull(resultType, "resultType must not be null");
		Objects.requireNonNull(action, "action must not be null");
		if (request.optedOut()) {
			this.observer.reservation(KeyReserver.tag(new OptedOut(request)));
			return this.transactions.execute((status) -> new IdempotentResult<>(action.get(), false, null));
		}
		return this.service.executeInTransaction(request, policy, new TransactionalDecision<>() {

			@Override
			public IdempotentResult<T> reserved(Reservation reservation, TransactionStatus transaction) {
				T value = action.get();
				String decisionId = reservation.ownerToken().toString();
				JsonExecution.this.service.complete(reservation, decisionId, response(request, value));
				return new IdempotentResult<>(value, false, decisionId);
			}

			@Override
			public IdempotentResult<T> notReserved(ReserveOutcome outcome) {
				return answer(outcome, policy, resultType, false);
			}

		});
	}

	private StoredResponse response(IdempotentRequest request, Object value) {
		byte[] result = this.json.write(value, "result of " + request.describe()).getBytes(StandardCharsets.UTF_8);
		return new StoredResponse(200, Map.of("Content-Type", List.of("application/json")), result);
	}

	private <T> IdempotentResult<T> answer(ReserveOutcome outcome, DuplicatePolicy policy, Class<T> resultType,
			boolean joined) {
		IdempotentRequest request = outcome.request();
		if (outcome instanceof Replay replay) {
			StoredDecision decision = replay.decision();
			byte[] body = (decision.response() != null) ? decision.response().body() : new byte[0];
			return new IdempotentResult<>(this.json.read(new String(body, StandardCharsets.UTF_8), resultType,
					"stored result of " + request.describe()), true, decision.decisionId());
		}
		if (outcome instanceof InFlight inFlight) {
			boolean waited = !joined && this.settings.resolve(policy) == DuplicatePolicy.WAIT;
			throw inFlight.exception(waited ? this.settings.waitTimeout() : null);
		}
		if (outcome instanceof FingerprintMismatch mismatch) {
			throw mismatch.exception();
		}
		throw new IllegalStateException("Unexpected outcome " + outcome + " for " + request.describe());
	}

	private void releaseAfterFailure(Reservation reservation, Throwable failure, boolean joined) {
		try {
			this.service.fail(reservation, ReleaseReason.HANDLER_FAILED);
		}
		catch (RuntimeException ex) {
			failure.addSuppressed(ex);
			if (joined) {
				// the action's failure broke the caller's transaction (an aborted
				// statement): it cannot commit, and its rollback removes the reservation
				logger.debug("Could not release " + reservation.request().describe() + " in the caller's"
						+ " transaction; it goes with that transaction's rollback", ex);
				return;
			}
			// the sweeper releases it after pending-ttl
			logger.warn("Could not release " + reservation.request().describe() + " after its action failed; it is"
					+ " released by the sweeper after ductor.idempotency.pending-ttl", ex);
		}
	}

}
