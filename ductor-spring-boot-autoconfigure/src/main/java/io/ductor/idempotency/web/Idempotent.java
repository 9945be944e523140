package io.ductor.idempotency.web;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import io.ductor.idempotency.DuplicatePolicy;

/**
 * Makes a Spring MVC handler method idempotent per {@code Idempotency-Key} request
 * header, following the IETF Idempotency-Key draft: the handler runs once per key and
 * tenant, and a repeated request gets the stored status, body and content headers with
 * {@code Idempotency-Replayed: true}.
 * <p>
 * Answers of {@link IdempotencyFilter} itself, all {@code application/problem+json}, none
 * stored: 400 when a required key is missing, empty, sent twice or malformed, or a
 * multipart body cannot be parsed; 413 when the request is larger than
 * {@code ductor.idempotency.max-request-size} (or the server's own multipart or form
 * limits); 409 while the first request with the key is in flight (under
 * {@link DuplicatePolicy#REJECT}, or after the wait timeout under
 * {@link DuplicatePolicy#WAIT}); 422 when the key was used for a different request
 * (method, path or body). Responses below 500 are stored and replayed, except refusals
 * (401, 403, 407, 429), responses carrying {@code Set-Cookie}, errors the container
 * renders ({@code sendError}, as for a {@code ResponseStatusException}) and bodies larger
 * than {@code ductor.idempotency.max-response-size}, which are never stored; a 5xx answer
 * or an exception leaves the key free so that a retry runs the handler again. The handler
 * must answer synchronously.
 * <p>
 * By default ({@link IdempotencyMode#ONE_TRANSACTION}) the reservation, the handler's
 * writes and the stored answer commit in one transaction and the answer is sent after the
 * commit; {@link IdempotencyMode#TWO_PHASE} is for handlers that call other systems, and
 * has a crash window described there.
 */
@Target(ElementType.METHOD)
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface Idempotent {

	/**
	 * The pool the keys belong to. Empty (the default) means the endpoint: the HTTP
	 * method and the mapping's path pattern, for example {@code POST
	 * /orders/{id}/payments}.
	 * @return the pool, or empty for the endpoint
	 */
	String pool() default "";

	/**
	 * Whether a request must carry a key. When {@code false}, a request without the
	 * header (or with an empty one) opts out and simply runs.
	 * @return whether the key is required
	 */
	boolean required() default true;

	/**
	 * What a request gets while another one with its key is in flight.
	 * @return the policy; {@link DuplicatePolicy#DEFAULT} for
	 * {@code ductor.idempotency.duplicate-policy}
	 */
	DuplicatePolicy duplicatePolicy() default DuplicatePolicy.DEFAULT;

	/**
	 * How the decision commits: with the handler's writes in one transaction (the
	 * default), or in two phases around a handler that holds no connection. See
	 * {@link IdempotencyMode} for what each guarantees after a crash.
	 * @return the mode
	 */
	IdempotencyMode mode() default IdempotencyMode.ONE_TRANSACTION;

}
