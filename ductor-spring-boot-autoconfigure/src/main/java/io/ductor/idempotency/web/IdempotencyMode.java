package io.ductor.idempotency.web;

/**
 * How an {@link Idempotent} handler's decision commits.
 */
public enum IdempotencyMode {

	/**
	 * The default. The reservation, the handler's own writes (its {@code @Transactional}
	 * work and any {@code JdbcTemplate} or JPA work on the same database join the
	 * transaction) and the completed record commit in one transaction, opened with the
	 * transaction manager the application's {@code @Transactional} uses; the response is
	 * held back and sent only after the commit. A crash, a lost connection, an exception,
	 * a 5xx answer or a failed commit (then answered with a 500 problem) rolls everything
	 * back: no trace, and a retry runs cleanly. After the commit a retry is a replay.
	 * There is no crash window, and nothing for the sweeper. The handler must answer
	 * synchronously: one returning a type Spring MVC answers asynchronously fails
	 * start-up, and one that starts asynchronous processing at run time (an
	 * {@code Object} handler returning a {@code CompletableFuture}) is refused with a 500
	 * problem, its work rolled back.
	 * <p>
	 * The cost: the handler runs holding one pooled connection and an open transaction.
	 * Duplicates do not: they wait outside any transaction. Work the handler commits in a
	 * transaction of its own ({@code @Transactional(propagation = REQUIRES_NEW)}, another
	 * transaction manager or database) and calls to other systems are not covered: they
	 * stay when the decision rolls back. A response that cannot be stored (larger than
	 * {@code ductor.idempotency.max-response-size}, or a success carrying
	 * {@code Set-Cookie}) rolls the transaction back and is answered with a 500 problem
	 * naming the cause.
	 */
	ONE_TRANSACTION,

	/**
	 * For handlers that call other systems and must not hold a connection while they do,
	 * and for handlers answering asynchronously: the reservation commits first, the
	 * handler runs with no connection or lock held by Ductor, and the completion (or the
	 * release) commits afterwards, once the asynchronous processing (a
	 * {@code DeferredResult}, {@code Callable}, {@code CompletionStage},
	 * {@code WebAsyncTask}, emitter or streaming body) has ended; the answer is sent
	 * whole then.
	 * <p>
	 * Its crash window: when the handler's own work has committed (or another system has
	 * acted) and the process dies or loses its connection before the completion commits,
	 * the reservation stays {@code pending}; the sweeper releases it after
	 * {@code ductor.idempotency.pending-ttl}, and the client's next retry runs the
	 * handler a second time. Pass the idempotency key on to the other system so that it
	 * can collapse that second call. A response larger than
	 * {@code ductor.idempotency.max-response-size} or one that cannot be stored is sent
	 * but not stored, and the key is released.
	 */
	TWO_PHASE

}
