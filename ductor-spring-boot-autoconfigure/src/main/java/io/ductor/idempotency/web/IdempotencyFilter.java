package io.ductor.idempotency.web;

import java.io.IOException;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletionStage;

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
import org.springframework.http.MediaType;
import org.springframework.http.server.RequestPath;
import org.springframework.transaction.TransactionException;
import org.springframework.transaction.TransactionStatus;
import org.springframework.util.unit.DataSize;
import org.springframework.web.bind.annotation.RequestMethod;
import org.springframework.web.context.request.async.DeferredResult;
import org.springframework.web.context.request.async.WebAsyncTask;
import org.springframework.web.filter.OncePerRequestFilter;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.servlet.HandlerExecutionChain;
import org.springframework.web.servlet.HandlerMapping;
import org.springframework.web.servlet.mvc.method.RequestMappingInfo;
import org.springframework.web.servlet.mvc.method.annotation.RequestMappingHandlerMapping;
import org.springframework.web.servlet.mvc.method.annotation.ResponseBodyEmitter;
import org.springframework.web.servlet.mvc.method.annotation.StreamingResponseBody;
import org.springframework.web.util.ServletRequestPathUtils;

import io.ductor.idempotency.DuplicatePolicy;
import io.ductor.idempotency.IdempotencyService;
import io.ductor.idempotency.IdempotentRequest;
import io.ductor.idempotency.InvalidIdempotencyKeyException;
import io.ductor.idempotency.ReleaseReason;
import io.ductor.idempotency.Reservation;
import io.ductor.idempotency.ReservationLostException;
import io.ductor.idempotency.ReserveOutcome;
import io.ductor.idempotency.StoredResponse;
import io.ductor.idempotency.TransactionalDecision;
import io.ductor.json.JsonCodec;

/**
 * Applies {@link Idempotent} to Spring MVC handler methods. Runs as a servlet filter so that it
 * can read the body for the fingerprint before the handler does, answer replays and errors
 * without invoking the handler, and capture the handler's status, body and content headers to
 * store them.
 * <p>
 * In {@link IdempotencyMode#ONE_TRANSACTION} (the default) the filter opens the transaction the
 * handler's own {@code @Transactional} work joins, reserves the key in it, runs the handler with
 * its response held back (at most {@code ductor.idempotency.max-response-size} bytes), stores the
 * answer in the same transaction and sends it after the commit; anything that cannot be stored
 * rolls the whole transaction back. In {@link IdempotencyMode#TWO_PHASE} the reservation commits
 * first, the handler runs with no connection or lock held by Ductor, and the completion commits
 * afterwards.
 * <p>
 * What the fingerprint covers, for which content types, is {@link RequestFingerprinter}'s; a
 * request larger than {@code ductor.idempotency.max-request-size} gets 413 before it is reserved.
 * Stored headers: {@value #STORED_HEADERS_DOC}.
 */
public class IdempotencyFilter extends OncePerRequestFilter implements Ordered, SmartInitializingSingleton {

	/** After Spring Security (-100) and the request-wrapping filters, so the principal is known. */
	public static final int ORDER = 0;

	/** Set to {@code true} on replayed responses. */
	public static final String REPLAYED_HEADER = "Idempotency-Replayed";

	/** The default of {@code ductor.idempotency.max-response-size}: 1 MB. */
	public static final int DEFAULT_MAX_RESPONSE_SIZE = 1024 * 1024;

	static final String STORED_HEADERS_DOC = "Content-Type, Content-Language, Content-Encoding, Content-Disposition,"
			+ " Content-Location, Location, ETag, Last-Modified";

	private static final List<String> STORED_HEADERS = List.of(HttpHeaders.CONTENT_LANGUAGE,
			HttpHeaders.CONTENT_ENCODING, HttpHeaders.CONTENT_DISPOSITION, HttpHeaders.CONTENT_LOCATION,
			HttpHeaders.LOCATION, HttpHeaders.ETAG, HttpHeaders.LAST_MODIFIED);

	private static final List<Class<?>> ASYNC_TYPES = List.of(Callable.class, DeferredResult.class, WebAsyncTask.class,
			CompletionStage.class, ResponseBodyEmitter.class, StreamingResponseBody.class);

	private static final Log logger = LogFactory.getLog(IdempotencyFilter.class);

	private final IdempotencyService service;

	private final TenantScopeResolver tenants;

	private final JsonCodec json;

	private final String headerName;

	private final ObjectProvider<RequestMappingHandlerMapping> mappingProvider;

	private final RequestFingerprinter fingerprinter;

	private final int maxResponseSize;

	private volatile List<RequestMappingHandlerMapping> mappings;

	/** The {@link Idempotent} handler methods and their annotations. */
	private volatile Map<Method, Idempotent> idempotentMethods;

	/** The HTTP methods they answer, or {@code null} when one of them answers any. */
	private volatile Set<String> idempotentHttpMethods;

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
	public IdempotencyFilter(IdempotencyService service, TenantScopeResolver tenants, JsonCodec json,
			String headerName, ObjectProvider<RequestMappingHandlerMapping> mappings, DataSize maxRequestSize) {
		this(service, tenants, json, headerName, mappings, maxRequestSize,
				DataSize.ofBytes(DEFAULT_MAX_RESPONSE_SIZE));
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
	public IdempotencyFilter(IdempotencyService service, TenantScopeResolver tenants, JsonCodec json,
			String headerName, ObjectProvider<RequestMappingHandlerMapping> mappings, DataSize maxRequestSize,
			DataSize maxResponseSize) {
		if (maxResponseSize.toBytes() < 1 || maxResponseSize.toBytes() > Integer.MAX_VALUE - 8) {
			throw new IllegalArgumentException("maxResponseSize must be between 1B and 2GB but was " + maxResponseSize);
		}
		this.service = service;
		this.tenants = tenants;
		this.json = json;
		this.headerName = headerName;
		this.mappingProvider = mappings;
		this.fingerprinter = new RequestFingerprinter(maxRequestSize);
		this.maxResponseSize = (int) maxResponseSize.toBytes();
	}

	@Override
	public int getOrder() {
		return ORDER;
	}

	/**
	 * Finds the {@link Idempotent} handler methods and refuses asynchronous ones: their response
	 * is not complete when the handler returns, so it could be neither stored nor released.
	 */
	@Override
	public void afterSingletonsInstantiated() {
		List<RequestMappingHandlerMapping> mappings = this.mappingProvider.orderedStream().toList();
		Map<Method, Idempotent> methods = new java.util.HashMap<>();
		Set<String> httpMethods = new java.util.HashSet<>();
		boolean anyHttpMethod = false;
		for (RequestMappingHandlerMapping mapping : mappings) {
			for (Map.Entry<RequestMappingInfo, HandlerMethod> entry : mapping.getHandlerMethods().entrySet()) {
				HandlerMethod handler = entry.getValue();
				Idempotent idempotent = handler.getMethodAnnotation(Idempotent.class);
				if (idempotent == null) {
					continue;
				}
				Class<?> returnType = handler.getMethod().getReturnType();
				if (ASYNC_TYPES.stream().anyMatch((type) -> type.isAssignableFrom(returnType))) {
					throw new IllegalStateException("@Idempotent handler " + handler.getShortLogMessage() + " returns "
							+ returnType.getSimpleName() + ", but @Idempotent needs a handler that answers synchronously");
				}
				methods.put(handler.getMethod(), idempotent);
				Set<RequestMethod> mapped = entry.getKey().getMethodsCondition().getMethods();
				anyHttpMethod |= mapped.isEmpty();
				mapped.forEach((method) -> httpMethods.add(method.name()));
			}
		}
		this.mappings = mappings;
		this.idempotentHttpMethods = anyHttpMethod ? null : Set.copyOf(httpMethods);
		this.idempotentMethods = Map.copyOf(methods);
	}

	@Override
	protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
			throws ServletException, IOException {
		Map<Method, Idempotent> methods = this.idempotentMethods;
		Set<String> httpMethods = this.idempotentHttpMethods;
		// most requests (GET pages, assets, actuator) cannot reach an @Idempotent handler: no lookup for them
		if (methods == null || methods.isEmpty()
				|| (httpMethods != null && !httpMethods.contains(request.getMethod()))) {
			chain.doFilter(request, response);
			return;
		}
		HandlerMethod handler = handlerMethod(request);
		Idempotent idempotent = (handler != null) ? methods.get(handler.getMethod()) : null;
		if (idempotent == null) {
			chain.doFilter(request, response);
			return;
		}
		String key;
		try {
			key = key(request, idempotent.required());
		}
		catch (InvalidIdempotencyKeyException ex) {
			writeProblem(request, response, HttpStatus.BAD_REQUEST, ex.getMessage());
			return;
		}
		if (key.isEmpty()) {
			chain.doFilter(request, response);
			return;
		}
		String pool = idempotent.pool().isEmpty() ? request.getMethod() + " " + pattern(request, handler)
				: idempotent.pool();
		FingerprintedRequest buffered;
		try {
			buffered = this.fingerprinter.read(request);
		}
		catch (RejectedRequestException ex) {
			writeProblem(request, response, ex.status(), ex.getMessage());
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
		if (outcome.result() == ReserveOutcome.Result.RESERVED) {
			runTwoPhase(buffered.request(), response, chain, outcome.reservation());
		}
		else {
			answer(outcome, policy, buffered.request(), response, chain);
		}
	}

	/** Answers a request that did not reserve its key. */
	private void answer(ReserveOutcome outcome, DuplicatePolicy policy, HttpServletRequest request,
			HttpServletResponse response, FilterChain chain) throws IOException, ServletException {
		IdempotentRequest idempotentRequest = outcome.request();
		switch (outcome.result()) {
			case REPLAY -> replay(outcome.decision().response(), response);
			case IN_FLIGHT -> {
				response.setHeader(HttpHeaders.RETRY_AFTER, "1");
				writeProblem(request, response, HttpStatus.CONFLICT, IdempotencyService
					.inFlight(idempotentRequest, (policy == DuplicatePolicy.WAIT) ? this.service.settings().waitTimeout()
							: null)
					.getMessage());
			}
			case FINGERPRINT_MISMATCH -> writeProblem(request, response, HttpStatus.UNPROCESSABLE_CONTENT,
					IdempotencyService.mismatch(idempotentRequest).getMessage());
			case OPTED_OUT -> chain.doFilter(request, response);
			case RESERVED -> throw new IllegalStateException("a reservation is not an answer");
		}
	}

	/**
	 * The one-transaction mode: the reservation, the handler's writes and the stored answer commit
	 * together; the answer is sent after the commit.
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
			// the handler answered, but storing or committing its decision failed: nothing was kept
			logger.warn("Could not commit the decision for idempotency key '" + idempotentRequest.key()
					+ "'; it was rolled back with the handler's writes and a retry runs again", ex);
			captured.discard();
			writeProblem(request, response, HttpStatus.INTERNAL_SERVER_ERROR, "The decision for "
					+ describe(idempotentRequest) + " could not be committed (the server log says why), so nothing"
					+ " of it was kept; retry with the same key");
			return;
		}
		if (notReserved != null) {
			answer(notReserved, policy, request, response, chain);
			return;
		}
		if (decided.problem != null) {
			captured.discard();
			writeProblem(request, response, HttpStatus.INTERNAL_SERVER_ERROR, decided.problem);
			return;
		}
		captured.send();
	}

	/**
	 * Inside the transaction, once the handler answered: store the answer, or roll everything back.
	 * @return the detail of the 500 problem to answer instead of the handler's response, or
	 * {@code null} to send that response
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
			// a refusal or an error is about this attempt, and an error page is rendered after this
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
			// the handler's own @Transactional work failed and marked the transaction: nothing can commit
			this.service.rollBack(reservation, transaction, ReleaseReason.ROLLED_BACK);
			return null;
		}
		this.service.complete(reservation, reservation.ownerToken().toString(), stored(captured));
		return null;
	}

	/** What the one-transaction decision came to, seen from outside the transaction. */
	private static final class OneTransaction {

		boolean answered;

		String problem;

	}

	/** Carries the handler's checked exception out of the transaction, which rolls back. */
	private static final class HandlerFailure extends RuntimeException {

		HandlerFailure(Exception cause) {
			super(cause);
		}

	}

	/**
	 * The two-phase mode: the reservation committed already; the handler runs, then the completion
	 * or the release commits.
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
				this.service.complete(reservation, reservation.ownerToken().toString(), stored(captured));
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

	private static StoredResponse stored(ResponseCapture captured) {
		Map<String, List<String>> headers = new LinkedHashMap<>();
		if (captured.getContentType() != null) {
			headers.put(HttpHeaders.CONTENT_TYPE, List.of(captured.getContentType()));
		}
		for (String name : STORED_HEADERS) {
			List<String> values = new ArrayList<>(captured.getHeaders(name));
			if (!values.isEmpty()) {
				headers.put(name, values);
			}
		}
		return new StoredResponse(captured.getStatus(), headers, captured.body());
	}

	private static String describe(IdempotentRequest request) {
		return "idempotency key '" + request.key() + "'";
	}

	private static void replay(StoredResponse stored, HttpServletResponse response) throws IOException {
		response.setStatus(stored.status());
		stored.headers().forEach((name, values) -> values.forEach((value) -> response.addHeader(name, value)));
		response.setHeader(REPLAYED_HEADER, "true");
		response.setContentLength(stored.body().length);
		response.getOutputStream().write(stored.body());
	}

	/**
	 * The key from the header: an sf-string ({@code "..."}, as the draft specifies) or a bare
	 * value; empty when the request opts out.
	 */
	private String key(HttpServletRequest request, boolean required) {
		List<String> values = Collections.list(request.getHeaders(this.headerName));
		if (values.isEmpty()) {
			if (required) {
				throw new InvalidIdempotencyKeyException("This request requires an idempotency key in the "
						+ this.headerName + " header");
			}
			return "";
		}
		if (values.size() > 1) {
			throw new InvalidIdempotencyKeyException("The " + this.headerName + " header must be sent once, not "
					+ values.size() + " times");
		}
		String value = values.get(0).strip();
		if (value.length() >= 2 && value.startsWith("\"") && value.endsWith("\"")) {
			value = value.substring(1, value.length() - 1);
			if (value.contains("\"") || value.contains("\\")) {
				throw new InvalidIdempotencyKeyException("The " + this.headerName
						+ " header must not contain escaped characters");
			}
		}
		if (value.isEmpty() && required) {
			throw new InvalidIdempotencyKeyException("The " + this.headerName + " header must not be empty");
		}
		try {
			return IdempotentRequest.checkKey(value);
		}
		catch (InvalidIdempotencyKeyException ex) {
			throw new InvalidIdempotencyKeyException("The " + this.headerName + " header is malformed: "
					+ ex.getMessage());
		}
	}

	private HandlerMethod handlerMethod(HttpServletRequest request) {
		Object previousPath = request.getAttribute(ServletRequestPathUtils.PATH_ATTRIBUTE);
		ServletRequestPathUtils.parseAndCache(request);
		try {
			for (RequestMappingHandlerMapping mapping : this.mappings) {
				HandlerExecutionChain found = mapping.getHandler(request);
				if (found != null) {
					return (found.getHandler() instanceof HandlerMethod handler) ? handler : null;
				}
			}
			return null;
		}
		catch (Exception ex) {
			// no such method, unsupported media type...: the dispatcher answers that itself
			return null;
		}
		finally {
			ServletRequestPathUtils.setParsedRequestPath((RequestPath) previousPath, request);
		}
	}

	private static String pattern(HttpServletRequest request, HandlerMethod handler) {
		Object pattern = request.getAttribute(HandlerMapping.BEST_MATCHING_PATTERN_ATTRIBUTE);
		return (pattern != null) ? pattern.toString() : handler.getShortLogMessage();
	}

	private void writeProblem(HttpServletRequest request, HttpServletResponse response, HttpStatus status,
			String detail) throws IOException {
		Map<String, Object> problem = new LinkedHashMap<>();
		problem.put("type", "about:blank");
		problem.put("title", status.getReasonPhrase());
		problem.put("status", status.value());
		problem.put("detail", detail);
		problem.put("instance", request.getRequestURI());
		byte[] body = this.json.write(problem, "problem detail").getBytes(StandardCharsets.UTF_8);
		response.setStatus(status.value());
		response.setContentType(MediaType.APPLICATION_PROBLEM_JSON_VALUE);
		response.setContentLength(body.length);
		response.getOutputStream().write(body);
	}

}
