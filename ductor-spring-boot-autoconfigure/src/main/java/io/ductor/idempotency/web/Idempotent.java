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
 * {@code Idempotency-Replayed: true}. A key belongs to its tenant across every endpoint
 * of the default pool, so reusing it for another method, path, body or conditional header
 * is refused. The key applies to whichever handler a request finally reaches, through a
 * forward or an include too; a {@code HEAD} request is its {@code GET}.
 * <p>
 * Answers of the filter itself, all {@code application/problem+json}, none stored: 400
 * when a required key is missing, empty, sent twice or malformed, the request's tenant
 * scope cannot be used, or a multipart body cannot be parsed; 413 when the request is
 * larger than {@code ductor.idempotency.max-request-size} (or the server's own multipart
 * or form limits); 409 while the first request with the key is in flight (under
 * {@link DuplicatePolicy#REJECT}, or after the wait timeout under
 * {@link DuplicatePolicy#WAIT}); 422 when the key was used for a different request. These
 * answers and replays carry the CORS headers Spring MVC's configuration gives the handler
 * for the request's origin. Responses below 500 are stored and replayed, except refusals
 * (401, 403, 407, 429), responses whose handler set a cookie ({@code Set-Cookie}), errors
 * the container renders ({@code sendError}, as for a {@code ResponseStatusException}) and
 * bodies larger than {@code ductor.idempotency.max-response-size}, which are never
 * stored; a 5xx answer or an exception, whatever answers it (an
 * {@code @ExceptionHandler}, a {@code ProblemDetail}), leaves the key free so that a
 * retry runs the handler again. Only what the handler's dispatch wrote is its answer: a
 * header or cookie a filter before Ductor's set is that filter's, never stored.
 * <p>
 * By default ({@link IdempotencyMode#ONE_TRANSACTION}) the reservation, the handler's
 * writes and the stored answer commit in one transaction and the answer is sent after the
 * commit: the handler must answer synchronously, and one whose return type Spring MVC
 * answers asynchronously fails start-up. {@link IdempotencyMode#TWO_PHASE} is for
 * handlers that call other systems or answer asynchronously ({@code DeferredResult},
 * {@code Callable}, a {@code CompletionStage}, an emitter, a streaming body), and has a
 * crash window described there.
 */
@Target(ElementType.METHOD)
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface Idempotent {

	/**
	 * The pool of every handler that names none: a key belongs to its tenant across all
	 * of them, as a client's key does at Stripe, so the same key sent to another method
	 * or path is a reused key (422).
	 */
	String DEFAULT_POOL = "http";

	/**
	 * The pool the keys belong to: keys of different pools never meet. Empty (the
	 * default) means {@value #DEFAULT_POOL}, shared by every handler that names no pool;
	 * name one to let a client use the same key at this handler and elsewhere for
	 * different requests.
	 * @return the pool, or empty for {@value #DEFAULT_POOL}
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
