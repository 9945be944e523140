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
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.server.RequestPath;
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
import org.springframework.web.util.ContentCachingResponseWrapper;
import org.springframework.web.util.ServletRequestPathUtils;

import io.ductor.idempotency.DuplicatePolicy;
import io.ductor.idempotency.IdempotencyService;
import io.ductor.idempotency.IdempotentRequest;
import io.ductor.idempotency.InvalidIdempotencyKeyException;
import io.ductor.idempotency.Reservation;
import io.ductor.idempotency.ReservationLostException;
import io.ductor.idempotency.ReserveOutcome;
import io.ductor.idempotency.StoredResponse;
import io.ductor.json.JsonCodec;

/**
 * Applies {@link Idempotent} to Spring MVC handler methods. Runs as a servlet filter so that it
 * can read the body for the fingerprint before the handler does, answer replays and errors
 * without invoking the handler, and capture the handler's status, body and content headers to
 * store them. No connection or lock is held while the handler runs: the reservation commits
 * first, the completion afterwards.
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
		this.service = service;
		this.tenants = tenants;
		this.json = json;
		this.headerName = headerName;
		this.mappingProvider = mappings;
		this.fingerprinter = new RequestFingerprinter(maxRequestSize);
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
		ReserveOutcome outcome = this.service.reserve(idempotentRequest, policy);
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
			case RESERVED -> runAndStore(buffered.request(), response, chain, outcome.reservation());
			case OPTED_OUT -> chain.doFilter(buffered.request(), response);
		}
	}

	private void runAndStore(HttpServletRequest request, HttpServletResponse response, FilterChain chain,
			Reservation reservation) throws IOException, ServletException {
		ContentCachingResponseWrapper captured = new ContentCachingResponseWrapper(response);
		try {
			chain.doFilter(request, captured);
		}
		catch (IOException | ServletException | RuntimeException | Error ex) {
			release(reservation);
			throw ex;
		}
		try {
			if (captured.getStatus() >= 500) {
				release(reservation);
			}
			else {
				this.service.complete(reservation, reservation.ownerToken().toString(), stored(captured));
			}
		}
		catch (ReservationLostException ex) {
			logger.warn(ex.getMessage());
		}
		finally {
			captured.copyBodyToResponse();
		}
	}

	private void release(Reservation reservation) {
		try {
			this.service.fail(reservation);
		}
		catch (RuntimeException ex) {
			logger.warn("Could not release idempotency key '" + reservation.request().key()
					+ "'; the sweeper releases it after ductor.idempotency.pending-ttl", ex);
		}
	}

	private static StoredResponse stored(ContentCachingResponseWrapper captured) {
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
		return new StoredResponse(captured.getStatus(), headers, captured.getContentAsByteArray());
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
