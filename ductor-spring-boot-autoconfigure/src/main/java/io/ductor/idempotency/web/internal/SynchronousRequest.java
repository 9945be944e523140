package io.ductor.idempotency.web.internal;

import jakarta.servlet.AsyncContext;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;

/**
 * The request of a handler that must answer before its transaction ends
 * ({@code ONE_TRANSACTION}): asynchronous processing cannot start, so Spring MVC refuses
 * a {@code Callable}, {@code DeferredResult}, {@code CompletionStage}, emitter or
 * streaming body the handler returns at run time before any of it runs on another thread,
 * and the filter learns that the handler tried.
 */
final class SynchronousRequest extends HttpServletRequestWrapper {

	private final String handler;

	private volatile boolean asyncRefused;

	SynchronousRequest(HttpServletRequest request, String handler) {
		super(request);
		this.handler = handler;
	}

	/**
	 * @return the handler, as messages name it
	 */
	String handlerDescription() {
		return this.handler;
	}

	/**
	 * @return whether the handler's answer tried to start asynchronous processing
	 */
	boolean asyncRefused() {
		return this.asyncRefused;
	}

	@Override
	public AsyncContext startAsync() {
		throw refuse();
	}

	@Override
	public AsyncContext startAsync(ServletRequest request, ServletResponse response) {
		throw refuse();
	}

	private IllegalStateException refuse() {
		this.asyncRefused = true;
		return new IllegalStateException(message(this.handler));
	}

	/**
	 * @return why a handler's asynchronous answer is refused in {@code ONE_TRANSACTION}
	 */
	static String message(String handler) {
		return "The @Idempotent handler " + handler + " answered asynchronously, but in the default mode"
				+ " ONE_TRANSACTION its work and its answer commit together before the answer is sent, so it must"
				+ " answer synchronously; nothing of it was kept. Use @Idempotent(mode = IdempotencyMode.TWO_PHASE)"
				+ " for an asynchronous answer";
	}

}
