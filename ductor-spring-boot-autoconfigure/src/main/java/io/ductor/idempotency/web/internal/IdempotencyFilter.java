package io.ductor.idempotency.web.internal;

import java.io.IOException;
import java.util.EnumSet;

import jakarta.servlet.DispatcherType;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
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
import org.springframework.web.servlet.mvc.method.annotation.RequestMappingHandlerMapping;

import io.ductor.idempotency.DuplicatePolicy;
import io.ductor.idempotency.IdempotencyService;
import io.ductor.idempotency.IdempotentRequest;
import io.ductor.idempotency.InvalidIdempotencyKeyException;
import io.ductor.idempotency.ReleaseReason;
import io.ductor.idempotency.Reservation;
import io.ductor.idempotency.ReserveOutcome.FingerprintMismatch;
import io.ductor.idempotency.ReserveOutcome.InFlight;
import io.ductor.idempotency.ReserveOutcome.Replay;
import io.ductor.idempotency.ReserveOutcome.Reserved;
import io.ductor.idempotency.ReserveOutcome;
import io.ductor.idempotency.TransactionalDecision;
import io.ductor.idempotency.internal.IdempotencySettings;
import io.ductor.idempotency.web.IdempotencyMode;
import io.ductor.idempotency.web.Idempotent;
import io.ductor.idempotency.web.TenantScopeResolver;
import io.ductor.idempotency.web.internal.IdempotentHandlers.IdempotentHandler;
import io.ductor.internal.Ids;
import io.ductor.json.internal.JsonCodec;

/**
 * Applies {@link Idempotent} to Spring MVC handler methods. Runs as a servlet filter so
 * that it can read the body for the fingerprint before the handler does, answer replays
 * and errors without invoking the handler, and capture the handler's status, body and
 * content headers to store them.
 * <p>
 * It applies a key to whichever {@link Idempotent} handler a request finally reaches: on
 * the request itself, or on the forward or include that reaches it (registered for those
 * dispatches, {@link #DISPATCHER_TYPES}), once per request; a nested dispatch of a
 * request whose key is applied already is part of that decision. A {@code HEAD} request
 * reaches the handler of its {@code GET}.
 * <p>
 * In {@link IdempotencyMode#ONE_TRANSACTION} (the default) the filter opens the
 * transaction the handler's own {@code @Transactional} work joins, reserves the key in
 * it, runs the handler with its response held back (at most
 * {@code ductor.idempotency.max-response-size} bytes), stores the answer in the same
 * transaction and sends it after the commit; anything that cannot be stored rolls the
 * whole transaction back, and so does an answer that tries to start asynchronous
 * processing. In {@link IdempotencyMode#TWO_PHASE} the reservation commits first, the
 * handler runs with no connection or lock held by Ductor, and the completion commits once
 * the answer is complete: when the handler returns, or once Spring MVC's asynchronous
 * processing of it has ended (the filter sees its last {@code ASYNC} dispatch).
 * <p>
 * What the fingerprint covers, for which content types, is
 * {@link RequestFingerprinter}'s; a request larger than
 * {@code ductor.idempotency.max-request-size} gets 413 before it is reserved. Stored
 * headers: {@value #STORED_HEADERS_DOC}. Replays and the filter's own problems carry what
 * Spring MVC's CORS configuration adds for the handler and the request's origin.
 * <p>
 * The filter runs the flow; finding the {@link Idempotent} handler a request reaches,
 * reading its key header, writing problem details, storing or replaying a response and
 * settling a two-phase decision are done by package helpers of one job each
 * ({@code IdempotentHandlers}, {@code IdempotencyKeyHeader}, {@code ProblemResponses},
 * {@code StoredResponses}, {@code TwoPhaseExchange}).
 */
public class IdempotencyFilter implements Filter, Ordered, SmartInitializingSingleton {

	/**
	 * After Spring Security (-100) and the request-wrapping filters, so the principal is
	 * known.
	 */
	public static final int ORDER = 0;

	/**
	 * The dispatches the filter must see: the request, the forwards and includes that may
	 * reach an {@link Idempotent} handler, and the asynchronous dispatches that complete
	 * an answer.
	 */
	public static final EnumSet<DispatcherType> DISPATCHER_TYPES = EnumSet.of(DispatcherType.REQUEST,
			DispatcherType.FORWARD, DispatcherType.INCLUDE, DispatcherType.ASYNC);

	/** Set to {@code true} on replayed responses. */
	public static final String REPLAYED_HEADER = "Idempotency-Replayed";

	/** The default of {@code ductor.idempotency.max-response-size}: 1 MB. */
	public static final int DEFAULT_MAX_RESPONSE_SIZE = 1024 * 1024;

	static final String STORED_HEADERS_DOC = "Content-Type, Content-Language, Content-Encoding, Content-Disposition,"
			+ " Content-Location, Content-Range, Location, ETag, Last-Modified, Cache-Control, Expires";

	/**
	 * The request attribute marking a request whose key is applied: a
	 * {@link TwoPhaseExchange} in two-phase mode, to be settled by a later asynchronous
	 * dispatch.
	 */
	private static final String APPLIED = IdempotencyFilter.class.getName() + ".applied";

	private static final Log logger = LogFactory.getLog(IdempotencyFilter.class);

	private final IdempotencyService service;

	private final IdempotencySettings settings;

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
	 * @param settings the policy and timeout duplicates wait with
	 * @param tenants resolves a request's tenant scope
	 * @param json writes problem details
	 * @param headerName the request header carrying the key ({@code Idempotency-Key})
	 * @param mappings the application's annotated-controller mappings, looked up once the
	 * context is refreshed
	 * @param maxRequestSize the largest request body read for the fingerprint
	 * @param maxResponseSize the largest response body stored
	 * ({@code ductor.idempotency.max-response-size}); never more is buffered
	 */
	public IdempotencyFilter(IdempotencyService service, IdempotencySettings settings, TenantScopeResolver tenants,
			JsonCodec json, String headerName, ObjectProvider<RequestMappingHandlerMapping> mappings,
			DataSize maxRequestSize, DataSize maxResponseSize) {
		if (maxResponseSize.toBytes() < 1 || maxResponseSize.toBytes() > Integer.MAX_VALUE - 8) {
			throw new IllegalArgumentException("maxResponseSize must be between 1B and 2GB but was " + maxResponseSize);
		}
		this.service = service;
		this.settings = settings;
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
	 * Finds the {@link Idempotent} handler methods; refuses, naming the handler, a pool
	 * that is not an identifier and, in {@link IdempotencyMode#ONE_TRANSACTION}, a return
	 * type Spring MVC answers asynchronously.
	 */
	@Override
	public void afterSingletonsInstantiated() {
		this.handlers = IdempotentHandlers.discover(this.mappingProvider.orderedStream().toList());
	}

	@Override
	public void doFilter(ServletRequest servletRequest, ServletResponse servletResponse, FilterChain chain)
			throws IOException, ServletException {
		if (!(servletRequest instanceof HttpServletRequest request)
				|| !(servletResponse instanceof HttpServletResponse response)) {
			chain.doFilter(servletRequest, servletResponse);
			return;
		}
		Object applied = request.getAttribute(APPLIED);
		DispatcherType dispatch = request.getDispatcherType();
		if (dispatch == DispatcherType.ASYNC) {
			if (applied instanceof TwoPhaseExchange exchange) {
				continueAsync(exchange, request, response, chain);
			}
			else {
				chain.doFilter(request, response);
			}
			return;
		}
		IdempotentHandlers handlers = this.handlers;
		IdempotentHandler handler = (applied == null && handlers != null && DISPATCHER_TYPES.contains(dispatch))
				? handlers.find(request) : null;
		if (handler == null) {
			chain.doFilter(request, response);
			return;
		}
		apply(handler, request, response, chain);
	}

	private void apply(IdempotentHandler handler, HttpServletRequest request, HttpServletResponse response,
			FilterChain chain) throws IOException, ServletException {
		Idempotent idempotent = handler.idempotent();
		String key;
		try {
			key = this.keyHeader.key(request, idempotent.required());
		}
		catch (InvalidIdempotencyKeyException ex) {
			problem(handler, request, response, HttpStatus.BAD_REQUEST, ex.getMessage());
			return;
		}
		if (key.isEmpty()) {
			chain.doFilter(request, response);
			return;
		}
		String tenantScope = this.tenants.tenantScope(request);
		if (tenantScope == null) {
			throw new IllegalStateException("The TenantScopeResolver " + this.tenants + " answered null for "
					+ request.getRequestURI() + "; it must answer \"\" for requests without a tenant");
		}
		if (!tenantScope.isEmpty()) {
			try {
				Ids.require("tenant scope", tenantScope);
			}
			catch (IllegalArgumentException ex) {
				problem(handler, request, response, HttpStatus.BAD_REQUEST,
						"The tenant scope of this request cannot hold idempotency keys: its " + ex.getMessage());
				return;
			}
		}
		FingerprintedRequest buffered;
		try {
			buffered = this.fingerprinter.read(request);
		}
		catch (RejectedRequestException ex) {
			problem(handler, request, response, ex.status(), ex.getMessage());
			return;
		}
		IdempotentRequest idempotentRequest = new IdempotentRequest(tenantScope, handler.pool(), key,
				buffered.fingerprint());
		DuplicatePolicy policy = this.settings.resolve(idempotent.duplicatePolicy());
		request.setAttribute(APPLIED, handler);
		if (idempotent.mode() == IdempotencyMode.ONE_TRANSACTION) {
			runInOneTransaction(handler, buffered.request(), response, chain, idempotentRequest, policy);
			return;
		}
		ReserveOutcome outcome = this.service.reserve(idempotentRequest, policy);
		if (outcome instanceof Reserved reserved) {
			runTwoPhase(buffered.request(), response, chain, reserved.reservation());
		}
		else {
			answer(handler, outcome, policy, buffered.request(), response, chain);
		}
	}

	/** Answers a request that did not reserve its key. */
	private void answer(IdempotentHandler handler, ReserveOutcome outcome, DuplicatePolicy policy,
			HttpServletRequest request, HttpServletResponse response, FilterChain chain)
			throws IOException, ServletException {
		if (outcome instanceof Replay replay) {
			if (handler.applyCors(request, response)) {
				StoredResponses.replay(replay.decision().response(), response);
			}
		}
		else if (outcome instanceof InFlight inFlight) {
			response.setHeader(HttpHeaders.RETRY_AFTER, "1");
			problem(handler, request, response, HttpStatus.CONFLICT,
					inFlight.exception((policy == DuplicatePolicy.WAIT) ? this.settings.waitTimeout() : null)
						.getMessage());
		}
		else if (outcome instanceof FingerprintMismatch mismatch) {
			problem(handler, request, response, HttpStatus.UNPROCESSABLE_CONTENT, mismatch.exception().getMessage());
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
	 * Writes one of the filter's own answers, with the CORS headers the handler's answer
	 * would carry.
	 */
	private void problem(IdempotentHandler handler, HttpServletRequest request, HttpServletResponse response,
			HttpStatus status, String detail) throws IOException {
		if (handler.applyCors(request, response)) {
			this.problems.write(request, response, status, detail);
		}
	}

	/**
	 * The one-transaction mode: the reservation, the handler's writes and the stored
	 * answer commit together; the answer is sent after the commit.
	 */
	private void runInOneTransaction(IdempotentHandler handler, HttpServletRequest request,
			HttpServletResponse response, FilterChain chain, IdempotentRequest idempotentRequest,
			DuplicatePolicy policy) throws IOException, ServletException {
		ResponseCapture captured = new ResponseCapture(response, this.maxResponseSize, false);
		SynchronousRequest synchronous = new SynchronousRequest(request, handler.describe());
		Object[] exceptionsBefore = HandlerExceptions.before(request);
		OneTransaction decided = new OneTransaction();
		ReserveOutcome notReserved;
		try {
			notReserved = this.service.executeInTransaction(idempotentRequest, policy,
					new TransactionalDecision<ReserveOutcome>() {

						@Override
						public ReserveOutcome reserved(Reservation reservation, TransactionStatus transaction) {
							try {
								chain.doFilter(synchronous, captured);
							}
							catch (IOException | ServletException ex) {
								throw new HandlerFailure(ex);
							}
							catch (RuntimeException ex) {
								if (!synchronous.asyncRefused()) {
									throw ex;
								}
								// the answer was refused: told below, like any other
							}
							decided.answered = true;
							decided.problem = decideInTransaction(reservation, transaction, captured, synchronous,
									HandlerExceptions.thrownSince(request, exceptionsBefore));
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
				if (synchronous.asyncRefused()) {
					refuseAfterDiscard(handler, request, captured, SynchronousRequest.message(handler.describe()));
					return;
				}
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
			refuseAfterDiscard(handler, request, captured,
					"The decision for idempotency key '" + idempotentRequest.key() + "' could not be committed (the"
							+ " server log says why), so nothing of it was kept; retry with the same key");
			return;
		}
		if (notReserved != null) {
			answer(handler, notReserved, policy, request, response, chain);
			return;
		}
		if (decided.problem != null) {
			refuseAfterDiscard(handler, request, captured, decided.problem);
			return;
		}
		captured.send();
	}

	/** Answers a 500 problem instead of the handler's answer, which is dropped. */
	private void refuseAfterDiscard(IdempotentHandler handler, HttpServletRequest request, ResponseCapture captured,
			String detail) throws IOException {
		captured.discard();
		problem(handler, request, (HttpServletResponse) captured.getResponse(), HttpStatus.INTERNAL_SERVER_ERROR,
				detail);
	}

	/**
	 * Inside the transaction, once the handler answered: store the answer, or roll
	 * everything back.
	 * @param threw whether the handler threw an exception that Spring MVC answered
	 * @return the detail of the 500 problem to answer instead of the handler's response,
	 * or {@code null} to send that response
	 */
	private String decideInTransaction(Reservation reservation, TransactionStatus transaction, ResponseCapture captured,
			SynchronousRequest request, boolean threw) {
		int status = captured.getStatus();
		if (request.asyncRefused()) {
			this.service.rollBack(reservation, transaction, ReleaseReason.NOT_STORABLE);
			return SynchronousRequest.message(request.handlerDescription());
		}
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
		if (captured.errorSent() && status < 400) {
			// a success or redirect sent with sendError (@ResponseStatus with a reason):
			// its page is rendered after this filter, so it cannot be stored, and its
			// work rolls back with the reservation; sent, it would claim that work
			this.service.rollBack(reservation, transaction, ReleaseReason.NOT_STORABLE);
			return "This @Idempotent handler answered " + status + " with sendError (as @ResponseStatus with a"
					+ " reason does), whose page the container renders after Ductor's filter, so it cannot be"
					+ " stored and its work was rolled back. Answer without a reason (or with a ResponseEntity),"
					+ " or use @Idempotent(mode = TWO_PHASE) to send such answers unstored";
		}
		if (captured.refusal() || captured.errorSent() || (status >= 400 && captured.setsCookie())) {
			// a refusal or an error is about this attempt, and an error page is rendered
			// after this filter: sent as it is, never replayed
			this.service.rollBack(reservation, transaction, ReleaseReason.NOT_STORABLE);
			return null;
		}
		if (threw) {
			// an exception's answer (an @ExceptionHandler's, a ProblemDetail), whatever
			// its status: the handler's work did not complete, so nothing of it is kept,
			// and its answer is sent as it is, as plain Spring sends it
			this.service.rollBack(reservation, transaction, ReleaseReason.HANDLER_FAILED);
			return null;
		}
		if (transaction.isRollbackOnly()) {
			// the handler's own @Transactional work failed and marked the transaction:
			// nothing can commit. An error is sent as it is; a success would claim work
			// that was rolled back (Spring answers 500 for it,
			// UnexpectedRollbackException)
			this.service.rollBack(reservation, transaction, ReleaseReason.ROLLED_BACK);
			return (status < 400)
					? "The work of this @Idempotent handler was rolled back: a @Transactional method"
							+ " it called failed and marked the transaction rollback-only, yet the handler answered "
							+ status + ". Nothing of it was kept, and its answer was not sent; retry with the same key"
					: null;
		}
		if (captured.setsCookie()) {
			this.service.rollBack(reservation, transaction, ReleaseReason.NOT_STORABLE);
			return "The response of this @Idempotent handler sets a cookie (Set-Cookie), and a response"
					+ " carrying Set-Cookie is never stored for replay, so its work was rolled back. Set cookies"
					+ " outside idempotent endpoints, or use @Idempotent(mode = TWO_PHASE) to send such responses"
					+ " unstored";
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
	 * completion or the release commits, now or once the asynchronous processing of its
	 * answer has ended.
	 */
	private void runTwoPhase(HttpServletRequest request, HttpServletResponse response, FilterChain chain,
			Reservation reservation) throws IOException, ServletException {
		TwoPhaseExchange exchange = new TwoPhaseExchange(this.service, reservation,
				new ResponseCapture(response, this.maxResponseSize, true), this.maxResponseSize,
				HandlerExceptions.before(request));
		request.setAttribute(APPLIED, exchange);
		try {
			chain.doFilter(request, exchange.captured());
		}
		catch (IOException | ServletException | RuntimeException | Error ex) {
			exchange.failed();
			throw ex;
		}
		exchange.dispatched(request);
	}

	/**
	 * An asynchronous dispatch of a two-phase request: Spring MVC writes the answer into
	 * the held response it started with.
	 */
	private void continueAsync(TwoPhaseExchange exchange, HttpServletRequest request, HttpServletResponse response,
			FilterChain chain) throws IOException, ServletException {
		try {
			chain.doFilter(request, response);
		}
		catch (IOException | ServletException | RuntimeException | Error ex) {
			exchange.failed();
			throw ex;
		}
		exchange.dispatched(request);
	}

}
