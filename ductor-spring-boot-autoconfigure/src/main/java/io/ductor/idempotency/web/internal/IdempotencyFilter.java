package io.ductor.idempotency.web.internal;

import java.io.IOException;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.core.Ordered;
import org.springframework.dao.DataAccessException;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.transaction.TransactionException;
import org.springframework.transaction.TransactionStatus;
import org.springframework.util.unit.DataSize;
import org.springframework.web.filter.OncePerRequestFilter;
import org.springframework.web.servlet.mvc.method.annotation.RequestMappingHandlerMapping;

import io.ductor.idempotency.DuplicatePolicy;
import io.ductor.idempotency.IdempotencyService;
import io.ductor.idempotency.IdempotentRequest;
import io.ductor.idempotency.InvalidIdempotencyKeyException;
import io.ductor.idempotency.ReleaseReason;
import io.ductor.idempotency.Reservation;
import io.ductor.idempotency.ReservationLostException;
import io.ductor.idempotency.ReserveOutcome.FingerprintMismatch;
import io.ductor.idempotency.ReserveOutcome.InFlight;
import io.ductor.idempotency.ReserveOutcome.Replay;
import io.ductor.idempotency.ReserveOutcome.Reserved;
import io.ductor.idempotency.ReserveOutcome;
import io.ductor.idempotency.TransactionalDecision;
import io.ductor.idempotency.web.IdempotencyMode;
import io.ductor.idempotency.web.Idempotent;
import io.ductor.idempotency.web.TenantScopeResolver;
import io.ductor.idempotency.web.internal.IdempotentHandlers.IdempotentHandler;
import io.ductor.json.internal.JsonCodec;

/**
 * Applies {@link Idempotent} to Spring MVC handler methods. Runs as a servlet filter so
 * that it can read the body for the fingerprint before the handler does, answer replays
 * and errors without invoking the handler, and capture the handler's status, body and
 * content headers to store them.
 * <p>
 * In {@link IdempotencyMode#ONE_TRANSACTION} (the default) the filter opens the
 * transaction the handler's own {@code @Transactional} work joins, reserves the key in
 * it, runs the handler with its response held back (at most
 * {@code ductor.idempotency.max-response-size} bytes), stores the answer in the same
 * transaction and sends it after the commit; anything that cannot be stored rolls the
 * whole transaction back. In {@link IdempotencyMode#TWO_PHASE} the reservation commits
 * first, the handler runs with no connection or lock held by Ductor, and the completion
 * commits afterwards.
 * <p>
 * What the fingerprint covers, for which content types, is
 * {@link RequestFingerprinter}'s; a request larger than
 * {@code ductor.idempotency.max-request-size} gets 413 before it is reserved. Stored
 * headers: {@value #STORED_HEADERS_DOC}.
 * <p>
 * The filter runs the flow; finding the {@link Idempotent} handler a request reaches,
 * reading its key header, writing problem details and storing or replaying a response are
 * done by package helpers of one job each ({@code IdempotentHandlers},
 * {@code IdempotencyKeyHeader}, {@code ProblemResponses}, {@code StoredResponses}).
 */
public class IdempotencyFilter extends OncePerRequestFilter implements Ordered, SmartInitializingSingleton {

	/**
	 * After Spring Security (-100) and the request-wrapping filters, so the principal is
	 * known.
	 */
	public static final int ORDER = 0;

	/** Set to {@code true} on replayed responses. */
	public static final String REPLAYED_HEADER = "Idempotency-Replayed";

	/** The default of {@code ductor.idempotency.max-response-size}: 1 MB. */
	public static final int DEFAULT_MAX_RESPONSE_SIZE = 1024 * 1024;

	static final String STORED_HEADERS_DOC = "Content-Type, Content-Language, Content-Encoding, Content-Disposition,"
			+ " Content-Location, Location, ETag, Last-Modified";

	private static final Log logger = LogFactory.getLog(IdempotencyFilter.class);

	private final IdempotencyService service;

	private final TenantScopeResolver tenants;

	private final ProblemResponses problems;

	private final IdempotencyKeyHeader keyHeader;

	private final ObjectProvider<RequestMappingHandlerMapping> mappingProvider;

	private final RequestFingerprinter fingerprinter;

	private final int maxResponseSize;

	/** The {@link Idempotent} handlers, {@code null} until the context is refreshed. */
	private volatile IdempotentHandlers handlers;

	/**
	 * Create the filter.
	 * @param service the idempotency service
	 * @param tenants resolves a request's tenant scope
	 * @param json writes problem details
	 * @param headerName the request header carrying the key ({@code Idempotency-Key})
	 * @param mappings the application's annotated-controller mappings, looked up once the
	 * context is refreshed
	 * @param maxRequestSize the largest request body read for the fingerprint
	 */
	public IdempotencyFilter(IdempotencyService service, TenantScopeResolver tenants, JsonCodec json, String headerName,
			ObjectProvider<RequestMappingHandlerMapping> mappings, DataSize maxRequestSize) {
		this(service, tenants, json, headerName, mappings, maxRequestSize, DataSize.ofBytes(DEFAULT_MAX_RESPONSE_SIZE));
	}

	/**
	 * Create the filter.
	 * @param service the idempotency service
	 * @param tenants resolves a request's tenant scope
	 * @param json writes problem details
	 * @param headerName the request header carrying the key ({@code Idempotency-Key})
	 * @param mappings the application's annotated-controller mappings, looked up once the
	 * context is refreshed
	 * @param maxRequestSize the largest request body read for the fingerprint
	 * @param maxResponseSize the largest response body stored
	 * ({@code ductor.idempotency.max-response-size}); never more is buffered
	 */
	public IdempotencyFilter(IdempotencyService service, TenantScopeResolver tenants, JsonCodec json, String headerName,
			ObjectProvider<RequestMappingHandlerMapping> mappings, DataSize maxRequestSize, DataSize maxResponseSize) {
		if (maxResponseSize.toBytes() < 1 || maxResponseSize.toBytes() > Integer.MAX_VALUE - 8) {
			throw new IllegalArgumentException("maxResponseSize must be between 1B and 2GB but was " + maxResponseSize);
		}
		this.service = service;
		this.tenants = tenants;
		this.problems = new ProblemResponses(json);
		this.keyHeader = new IdempotencyKeyHeader(headerName);
		this.mappingProvider = mappings;
		this.fingerprinter = new RequestFingerprinter(maxRequestSize);
		this.maxResponseSize = (int) maxResponseSize.toBytes();
	}

	@Override
	public int getOrder() {
		return ORDER;
	}

	/**
	 * Finds the {@link Idempotent} handler methods and refuses asynchronous ones: their
	 * response is not complete when the handler returns, so it could be neither stored
	 * nor released.
	 */
	@Override
	public void afterSingletonsInstantiated() {
		this.handlers = IdempotentHandlers.discover(this.mappingProvider.orderedStream().toList());
	}

	@Override
	protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
			throws ServletException, IOException {
		IdempotentHandlers handlers = this.handlers;
		IdempotentHandler handler = (handlers != null) ? handlers.find(request) : null;
		if (handler == null) {
			chain.doFilter(request, response);
			return;
		}
		Idempotent idempotent = handler.idempotent();
		String key;
		try {
			key = this.keyHeader.key(request, idempotent.required());
		}
		catch (InvalidIdempotencyKeyException ex) {
			this.problems.write(request, response, HttpStatus.BAD_REQUEST, ex.getMessage());
			return;
		}
		if (key.isEmpty()) {
			chain.doFilter(request, response);
			return;
		}
		String pool = handler.pool(request);
		FingerprintedRequest buffered;
		try {
			buffered = this.fingerprinter.read(request);
		}
		catch (RejectedRequestException ex) {
			this.problems.write(request, response, ex.status(), ex.getMessage());
			return;
		}
		IdempotentRequest idempotentRequest = new IdempotentRequest(this.tenants.tenantScope(request), pool, key,
				buffered.fingerprint());
		DuplicatePolicy policy = this.service.settings().resolve(idempotent.duplicatePolicy());
		if (idempotent.mode() == IdempotencyMode.ONE_TRANSACTION) {
			runInOneTransaction(buffered.request(), response, chain, idempotentRequest, policy);
			return;
		}
		ReserveOutcome outcome = this.service.reserve(idempotentRequest, policy);
		if (outcome instanceof Reserved reserved) {
			runTwoPhase(buffered.request(), response, chain, reserved.reservation());
		}
		else {
			answer(outcome, policy, buffered.request(), response, chain);
		}
	}

	/** Answers a request that did not reserve its key. */
	private void answer(ReserveOutcome outcome, DuplicatePolicy policy, HttpServletRequest request,
			HttpServletResponse response, FilterChain chain) throws IOException, ServletException {
		if (outcome instanceof Replay replay) {
			StoredResponses.replay(replay.decision().response(), response);
		}
		else if (outcome instanceof InFlight inFlight) {
			response.setHeader(HttpHeaders.RETRY_AFTER, "1");
			this.problems.write(request, response, HttpStatus.CONFLICT,
					inFlight.exception((policy == DuplicatePolicy.WAIT) ? this.service.settings().waitTimeout() : null)
						.getMessage());
		}
		else if (outcome instanceof FingerprintMismatch mismatch) {
			this.problems.write(request, response, HttpStatus.UNPROCESSABLE_CONTENT, mismatch.exception().getMessage());
		}
		else if (outcome instanceof Reserved) {
			throw new IllegalStateException("a reservation is not an answer");
		}
		else {
			// opted out
			chain.doFilter(request, response);
		}
	}

	/**
	 * The one-transaction mode: the reservation, the handler's writes and the stored
	 * answer commit together; the answer is sent after the commit.
	 */
	private void runInOneTransaction(HttpServletRequest request, HttpServletResponse response, FilterChain chain,
			IdempotentRequest idempotentRequest, DuplicatePolicy policy) throws IOException, ServletException {
		ResponseCapture captured = new ResponseCapture(response, this.maxResponseSize, false);
		OneTransaction decided = new OneTransaction();
		ReserveOutcome notReserved;
		try {
			notReserved = this.service.executeInTransaction(idempotentRequest, policy,
					new TransactionalDecision<ReserveOutcome>() {

						@Override
						public ReserveOutcome reserved(Reservation reservation, TransactionStatus transaction) {
							try {
								chain.doFilter(request, captured);
							}
							catch (IOException | ServletException ex) {
								throw new HandlerFailure(ex);
							}
							decided.answered = true;
							decided.problem = decideInTransaction(reservation, transaction, captured);
							return null;
						}

						@Override
						public ReserveOutcome notReserved(ReserveOutcome outcome) {
							return outcome;
						}

					});
		}
		catch (HandlerFailure ex) {
			// rolled back with the handler's writes
			if (ex.getCause() instanceof ServletException servlet) {
				throw servlet;
			}
			throw (IOException) ex.getCause();
		}
		catch (TransactionException | DataAccessException ex) {
			if (!decided.answered) {
				throw ex;
			}
			// the handler answered, but storing or committing its decision failed:
			// nothing was kept
			logger.warn("Could not commit the decision for idempotency key '" + idempotentRequest.key()
					+ "'; it was rolled back with the handler's writes and a retry runs again", ex);
			captured.discard();
			this.problems.write(request, response, HttpStatus.INTERNAL_SERVER_ERROR,
					"The decision for idempotency key '" + idempotentRequest.key() + "' could not be committed (the"
							+ " server log says why), so nothing of it was kept; retry with the same key");
			return;
		}
		if (notReserved != null) {
			answer(notReserved, policy, request, response, chain);
			return;
		}
		if (decided.problem != null) {
			captured.discard();
			this.problems.write(request, response, HttpStatus.INTERNAL_SERVER_ERROR, decided.problem);
			return;
		}
		captured.send();
	}

	/**
	 * Inside the transaction, once the handler answered: store the answer, or roll
	 * everything back.
	 * @return the detail of the 500 problem to answer instead of the handler's response,
	 * or {@code null} to send that response
	 */
	private String decideInTransaction(Reservation reservation, TransactionStatus transaction,
			ResponseCapture captured) {
		int status = captured.getStatus();
		if (captured.overflowed()) {
			this.service.rollBack(reservation, transaction, ReleaseReason.TOO_LARGE);
			return "The response of this @Idempotent handler was larger than ductor.idempotency.max-response-size ("
					+ this.maxResponseSize + " bytes), so its decision could not be stored and its work was rolled"
					+ " back. Raise the limit, answer with less, or use @Idempotent(mode = TWO_PHASE) to send such"
					+ " responses unstored";
		}
		if (status >= 500) {
			this.service.rollBack(reservation, transaction, ReleaseReason.SERVER_ERROR);
			return null;
		}
		if (captured.refusal() || captured.errorSent() || (status >= 400 && captured.setsCookie())) {
			// a refusal or an error is about this attempt, and an error page is rendered
			// after this
			// filter: sent as it is, never replayed
			this.service.rollBack(reservation, transaction, ReleaseReason.NOT_STORABLE);
			return null;
		}
		if (captured.setsCookie()) {
			this.service.rollBack(reservation, transaction, ReleaseReason.NOT_STORABLE);
			return "The response of this @Idempotent handler sets a cookie (Set-Cookie), and a response"
					+ " carrying Set-Cookie is never stored for replay, so its work was rolled back. Set cookies"
					+ " outside idempotent endpoints, or use @Idempotent(mode = TWO_PHASE) to send such responses"
					+ " unstored";
		}
		if (transaction.isRollbackOnly()) {
			// the handler's own @Transactional work failed and marked the transaction:
			// nothing can commit
			this.service.rollBack(reservation, transaction, ReleaseReason.ROLLED_BACK);
			return null;
		}
		this.service.complete(reservation, reservation.ownerToken().toString(), StoredResponses.stored(captured));
		return null;
	}

	/** What the one-transaction decision came to, seen from outside the transaction. */
	private static final class OneTransaction {

		boolean answered;

		String problem;

	}

	/**
	 * Carries the handler's checked exception out of the transaction, which rolls back.
	 */
	private static final class HandlerFailure extends RuntimeException {

		HandlerFailure(Exception cause) {
			super(cause);
		}

	}

	/**
	 * The two-phase mode: the reservation committed already; the handler runs, then the
	 * completion or the release commits.
	 */
	private void runTwoPhase(HttpServletRequest request, HttpServletResponse response, FilterChain chain,
			Reservation reservation) throws IOException, ServletException {
		ResponseCapture captured = new ResponseCapture(response, this.maxResponseSize, true);
		try {
			chain.doFilter(request, captured);
		}
		catch (IOException | ServletException | RuntimeException | Error ex) {
			release(reservation, ReleaseReason.HANDLER_FAILED);
			throw ex;
		}
		try {
			if (captured.overflowed()) {
				logger.warn("The response for idempotency key '" + reservation.request().key() + "' was larger than"
						+ " ductor.idempotency.max-response-size (" + this.maxResponseSize + " bytes): it was sent but"
						+ " not stored, and the key was released, so a retry runs the handler again");
				release(reservation, ReleaseReason.TOO_LARGE);
			}
			else if (captured.getStatus() >= 500) {
				release(reservation, ReleaseReason.SERVER_ERROR);
			}
			else if (captured.refusal() || captured.setsCookie() || captured.errorSent()) {
				logger.warn("The response for idempotency key '" + reservation.request().key() + "' is a "
						+ captured.getStatus() + (captured.setsCookie() ? " carrying Set-Cookie" : "")
						+ (captured.errorSent() ? " sent as an error page (sendError)" : "")
						+ ", which is never stored for replay: it was sent, and the key was released");
				release(reservation, ReleaseReason.NOT_STORABLE);
			}
			else {
				this.service.complete(reservation, reservation.ownerToken().toString(),
						StoredResponses.stored(captured));
			}
		}
		catch (ReservationLostException ex) {
			logger.warn(ex.getMessage());
		}
		finally {
			captured.send();
		}
	}

	private void release(Reservation reservation, ReleaseReason reason) {
		try {
			this.service.fail(reservation, reason);
		}
		catch (RuntimeException ex) {
			logger.warn("Could not release idempotency key '" + reservation.request().key()
					+ "'; the sweeper releases it after ductor.idempotency.pending-ttl", ex);
		}
	}

}
