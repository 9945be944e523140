package io.ductor.idempotency.web.internal;

import java.io.IOException;
import java.lang.reflect.Method;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletionStage;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import org.springframework.core.ReactiveAdapterRegistry;
import org.springframework.core.ResolvableType;
import org.springframework.http.HttpEntity;
import org.springframework.http.server.RequestPath;
import org.springframework.web.bind.annotation.RequestMethod;
import org.springframework.web.context.request.async.DeferredResult;
import org.springframework.web.context.request.async.WebAsyncTask;
import org.springframework.web.cors.CorsConfiguration;
import org.springframework.web.cors.CorsConfigurationSource;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.servlet.HandlerExecutionChain;
import org.springframework.web.servlet.HandlerInterceptor;
import org.springframework.web.servlet.mvc.method.RequestMappingInfo;
import org.springframework.web.servlet.mvc.method.annotation.RequestMappingHandlerMapping;
import org.springframework.web.servlet.mvc.method.annotation.ResponseBodyEmitter;
import org.springframework.web.servlet.mvc.method.annotation.StreamingResponseBody;
import org.springframework.web.util.ServletRequestPathUtils;

import io.ductor.idempotency.web.IdempotencyMode;
import io.ductor.idempotency.web.Idempotent;
import io.ductor.internal.Ids;

/**
 * The {@link Idempotent} handler methods of the application's annotated controllers,
 * found once, and the lookup of the one a request reaches.
 */
public final class IdempotentHandlers {

	/**
	 * What Spring MVC answers after the handler has returned, on another thread: the
	 * return types its asynchronous return value handlers take (a reactive type too).
	 */
	private static final List<Class<?>> ASYNC_TYPES = List.of(Callable.class, DeferredResult.class, WebAsyncTask.class,
			CompletionStage.class, ResponseBodyEmitter.class, StreamingResponseBody.class);

	private final List<RequestMappingHandlerMapping> mappings;

	/** The {@link Idempotent} handler methods and their annotations. */
	private final Map<Method, Idempotent> methods;

	/** The HTTP methods they answer, or {@code null} when one of them answers any. */
	private final Set<String> httpMethods;

	private IdempotentHandlers(List<RequestMappingHandlerMapping> mappings, Map<Method, Idempotent> methods,
			Set<String> httpMethods) {
		this.mappings = mappings;
		this.methods = methods;
		this.httpMethods = httpMethods;
	}

	/**
	 * Finds the {@link Idempotent} handler methods. Refuses a pool that is not an
	 * identifier, and, in {@link IdempotencyMode#ONE_TRANSACTION}, a handler whose return
	 * type (resolved through {@code ResponseEntity} and {@code HttpEntity}) is answered
	 * asynchronously: its answer is written after the transaction the handler ran in has
	 * ended. Handlers whose type says nothing ({@code Object}, {@code ResponseEntity<?>})
	 * are checked when they answer.
	 * @param mappings the application's annotated-controller mappings
	 * @return the handlers found
	 * @throws IllegalStateException naming the handler and the mode that would work
	 */
	static IdempotentHandlers discover(List<RequestMappingHandlerMapping> mappings) {
		Map<Method, Idempotent> methods = new HashMap<>();
		Set<String> httpMethods = new HashSet<>();
		boolean anyHttpMethod = false;
		for (RequestMappingHandlerMapping mapping : mappings) {
			for (Map.Entry<RequestMappingInfo, HandlerMethod> entry : mapping.getHandlerMethods().entrySet()) {
				HandlerMethod handler = entry.getValue();
				Idempotent idempotent = handler.getMethodAnnotation(Idempotent.class);
				if (idempotent == null) {
					continue;
				}
				check(handler, idempotent);
				methods.put(handler.getMethod(), idempotent);
				Set<RequestMethod> mapped = entry.getKey().getMethodsCondition().getMethods();
				anyHttpMethod |= mapped.isEmpty();
				mapped.forEach((method) -> httpMethods.add(method.name()));
			}
		}
		return new IdempotentHandlers(mappings, Map.copyOf(methods), anyHttpMethod ? null : Set.copyOf(httpMethods));
	}

	private static void check(HandlerMethod handler, Idempotent idempotent) {
		if (!idempotent.pool().isEmpty()) {
			try {
				Ids.require("pool", idempotent.pool());
			}
			catch (IllegalArgumentException ex) {
				throw new IllegalStateException(
						"@Idempotent handler " + handler.getShortLogMessage() + " names a bad " + ex.getMessage(), ex);
			}
		}
		ResolvableType answered = answeredType(handler);
		if (idempotent.mode() == IdempotencyMode.ONE_TRANSACTION && isAsynchronous(answered.resolve(Object.class))) {
			throw new IllegalStateException("@Idempotent handler " + handler.getShortLogMessage() + " returns "
					+ handler.getReturnType().getGenericParameterType().getTypeName()
					+ ", which Spring MVC answers asynchronously, after the handler returned and the transaction of"
					+ " the default mode ONE_TRANSACTION ended, so its work and its answer cannot commit together."
					+ " Use @Idempotent(mode = IdempotencyMode.TWO_PHASE): its answer is stored once the"
					+ " asynchronous processing has ended");
		}
	}

	/**
	 * The type a handler answers with: its return type, or the body type of a
	 * {@code ResponseEntity} or {@code HttpEntity}.
	 */
	private static ResolvableType answeredType(HandlerMethod handler) {
		ResolvableType type = ResolvableType.forMethodParameter(handler.getReturnType());
		if (HttpEntity.class.isAssignableFrom(type.resolve(Object.class))) {
			return type.as(HttpEntity.class).getGeneric(0);
		}
		return type;
	}

	private static boolean isAsynchronous(Class<?> type) {
		return ASYNC_TYPES.stream().anyMatch((async) -> async.isAssignableFrom(type))
				|| (type != Object.class && ReactiveAdapterRegistry.getSharedInstance().getAdapter(type) != null);
	}

	/**
	 * The {@link Idempotent} handler a request reaches; a {@code HEAD} request reaches
	 * the handler of its {@code GET}.
	 * @param request the request
	 * @return the handler, or {@code null} when the request reaches no {@link Idempotent}
	 * handler
	 */
	IdempotentHandler find(HttpServletRequest request) {
		// most requests (GET pages, assets, actuator) cannot reach an @Idempotent
		// handler: no lookup for them
		if (this.methods.isEmpty() || (this.httpMethods != null && !this.httpMethods.contains(request.getMethod())
				&& !("HEAD".equals(request.getMethod()) && this.httpMethods.contains("GET")))) {
			return null;
		}
		Object previousPath = request.getAttribute(ServletRequestPathUtils.PATH_ATTRIBUTE);
		ServletRequestPathUtils.parseAndCache(request);
		try {
			for (RequestMappingHandlerMapping mapping : this.mappings) {
				HandlerExecutionChain found = mapping.getHandler(request);
				if (found != null) {
					Idempotent idempotent = (found.getHandler() instanceof HandlerMethod handler)
							? this.methods.get(handler.getMethod()) : null;
					return (idempotent != null)
							? new IdempotentHandler((HandlerMethod) found.getHandler(), idempotent, mapping, found)
							: null;
				}
			}
			return null;
		}
		catch (Exception ex) {
			// no such method, unsupported media type...: the dispatcher answers that
			// itself
			return null;
		}
		finally {
			ServletRequestPathUtils.setParsedRequestPath((RequestPath) previousPath, request);
		}
	}

	/**
	 * An {@link Idempotent} handler method a request reaches.
	 *
	 * @param handler the handler method
	 * @param idempotent its annotation
	 * @param mapping the mapping that found it
	 * @param chain what the mapping found for the request: the handler and its
	 * interceptors
	 */
	record IdempotentHandler(HandlerMethod handler, Idempotent idempotent, RequestMappingHandlerMapping mapping,
			HandlerExecutionChain chain) {

		/**
		 * @return the pool its keys live in: the annotation's, else
		 * {@value Idempotent#DEFAULT_POOL}
		 */
		String pool() {
			return this.idempotent.pool().isEmpty() ? Idempotent.DEFAULT_POOL : this.idempotent.pool();
		}

		/**
		 * @return how the handler is named in messages
		 */
		String describe() {
			return this.handler.getShortLogMessage();
		}

		/**
		 * Adds what Spring MVC's CORS configuration adds for this handler and this
		 * request ({@code Access-Control-Allow-*} for an allowed origin, {@code Vary}),
		 * as the handler's own answer gets it, to an answer the handler does not give: a
		 * replay or a problem.
		 * @return {@code false} when the request's origin is refused: Spring MVC's 403
		 * has been written, and nothing else may be
		 */
		boolean applyCors(HttpServletRequest request, HttpServletResponse response) throws IOException {
			for (HandlerInterceptor interceptor : this.chain.getInterceptorList()) {
				if (interceptor instanceof CorsConfigurationSource source) {
					CorsConfiguration config = source.getCorsConfiguration(request);
					return this.mapping.getCorsProcessor().processRequest(config, request, response);
				}
			}
			return true;
		}

	}

}
