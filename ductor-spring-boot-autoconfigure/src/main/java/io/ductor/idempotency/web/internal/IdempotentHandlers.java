package io.ductor.idempotency.web.internal;

import java.lang.reflect.Method;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletionStage;

import jakarta.servlet.http.HttpServletRequest;

import org.springframework.http.server.RequestPath;
import org.springframework.web.bind.annotation.RequestMethod;
import org.springframework.web.context.request.async.DeferredResult;
import org.springframework.web.context.request.async.WebAsyncTask;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.servlet.HandlerExecutionChain;
import org.springframework.web.servlet.HandlerMapping;
import org.springframework.web.servlet.mvc.method.RequestMappingInfo;
import org.springframework.web.servlet.mvc.method.annotation.RequestMappingHandlerMapping;
import org.springframework.web.servlet.mvc.method.annotation.ResponseBodyEmitter;
import org.springframework.web.servlet.mvc.method.annotation.StreamingResponseBody;
import org.springframework.web.util.ServletRequestPathUtils;

import io.ductor.idempotency.web.Idempotent;

/**
 * The {@link Idempotent} handler methods of the application's annotated controllers,
 * found once, and the lookup of the one a request reaches.
 */
public final class IdempotentHandlers {

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
	 * Finds the {@link Idempotent} handler methods and refuses asynchronous ones: their
	 * response is not complete when the handler returns, so it could be neither stored
	 * nor released.
	 * @param mappings the application's annotated-controller mappings
	 * @return the handlers found
	 * @throws IllegalStateException for an asynchronous {@link Idempotent} handler
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
				Class<?> returnType = handler.getMethod().getReturnType();
				if (ASYNC_TYPES.stream().anyMatch((type) -> type.isAssignableFrom(returnType))) {
					throw new IllegalStateException("@Idempotent handler " + handler.getShortLogMessage() + " returns "
							+ returnType.getSimpleName()
							+ ", but @Idempotent needs a handler that answers synchronously");
				}
				methods.put(handler.getMethod(), idempotent);
				Set<RequestMethod> mapped = entry.getKey().getMethodsCondition().getMethods();
				anyHttpMethod |= mapped.isEmpty();
				mapped.forEach((method) -> httpMethods.add(method.name()));
			}
		}
		return new IdempotentHandlers(mappings, Map.copyOf(methods), anyHttpMethod ? null : Set.copyOf(httpMethods));
	}

	/**
	 * The {@link Idempotent} handler a request reaches.
	 * @param request the request
	 * @return the handler, or {@code null} when the request reaches no {@link Idempotent}
	 * handler
	 */
	IdempotentHandler find(HttpServletRequest request) {
		// most requests (GET pages, assets, actuator) cannot reach an @Idempotent
		// handler: no lookup for them
		if (this.methods.isEmpty() || (this.httpMethods != null && !this.httpMethods.contains(request.getMethod()))) {
			return null;
		}
		HandlerMethod handler = handlerMethod(request);
		Idempotent idempotent = (handler != null) ? this.methods.get(handler.getMethod()) : null;
		return (idempotent != null) ? new IdempotentHandler(handler, idempotent) : null;
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
	 */
	record IdempotentHandler(HandlerMethod handler, Idempotent idempotent) {

		/**
		 * @param request the request the handler was found for
		 * @return the pool its keys live in: the annotation's, else the HTTP method and
		 * the matched path pattern
		 */
		String pool(HttpServletRequest request) {
			if (!this.idempotent.pool().isEmpty()) {
				return this.idempotent.pool();
			}
			Object pattern = request.getAttribute(HandlerMapping.BEST_MATCHING_PATTERN_ATTRIBUTE);
			String path = (pattern != null) ? pattern.toString() : this.handler.getShortLogMessage();
			return request.getMethod() + " " + path;
		}

	}

}
