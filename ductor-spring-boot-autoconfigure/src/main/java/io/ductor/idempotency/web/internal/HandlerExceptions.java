package io.ductor.idempotency.web.internal;

import jakarta.servlet.RequestDispatcher;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import org.springframework.core.Ordered;
import org.springframework.web.servlet.DispatcherServlet;
import org.springframework.web.servlet.HandlerExceptionResolver;
import org.springframework.web.servlet.ModelAndView;

/**
 * Tells the filter that the handler a request reached threw, even when Spring MVC
 * answered for it: an {@code @ExceptionHandler} or {@code @ControllerAdvice} answer, the
 * {@code ProblemDetail} of a {@code ResponseStatusException}, an error view. Such an
 * answer is an exception's, whatever its status: the handler's work did not complete, so
 * it is never stored for replay.
 * <p>
 * As the first of Spring MVC's exception resolvers it records every exception on its
 * request and resolves nothing; without it (an application that chose its resolvers
 * itself) the attributes Spring MVC and the container leave behind an answered exception
 * are read instead.
 */
public final class HandlerExceptions implements HandlerExceptionResolver, Ordered {

	private static final String THROWN = HandlerExceptions.class.getName() + ".thrown";

	/** The request attributes holding an exception that was answered. */
	private static final String[] ATTRIBUTES = { THROWN, DispatcherServlet.EXCEPTION_ATTRIBUTE,
			RequestDispatcher.ERROR_EXCEPTION };

	@Override
	public ModelAndView resolveException(HttpServletRequest request, HttpServletResponse response, Object handler,
			Exception ex) {
		request.setAttribute(THROWN, ex);
		return null;
	}

	@Override
	public int getOrder() {
		return Ordered.HIGHEST_PRECEDENCE;
	}

	/**
	 * @return the exceptions the request holds now, to tell later whether one was thrown
	 * since
	 */
	static Object[] before(HttpServletRequest request) {
		Object[] held = new Object[ATTRIBUTES.length];
		for (int i = 0; i < ATTRIBUTES.length; i++) {
			held[i] = request.getAttribute(ATTRIBUTES[i]);
		}
		return held;
	}

	/**
	 * @param before what {@link #before} returned before the handler's dispatch
	 * @return whether an exception was thrown (and answered) since
	 */
	static boolean thrownSince(HttpServletRequest request, Object[] before) {
		for (int i = 0; i < ATTRIBUTES.length; i++) {
			Object now = request.getAttribute(ATTRIBUTES[i]);
			if (now != null && now != before[i]) {
				return true;
			}
		}
		return false;
	}

}
