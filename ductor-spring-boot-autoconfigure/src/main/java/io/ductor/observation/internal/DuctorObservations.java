package io.ductor.observation.internal;

import java.util.Map;

/**
 * Where Ductor's units of work are observed while they run: ticks, effect recordings,
 * dispatch attempts, ingress reservations and worker rounds. The Micrometer
 * implementation ({@link MicrometerDuctorObservations}) turns each into an
 * {@code Observation}, and through the application's handlers into timers and spans;
 * {@link #NOOP} observes nothing and costs nothing. Implementations must be fast and must
 * not throw.
 */
public interface DuctorObservations {

	/** Observes nothing. */
	DuctorObservations NOOP = new DuctorObservations() {
	};

	/**
	 * A tick of a run starts on the caller's thread; the returned scope is current until
	 * closed.
	 * @param runId the run
	 * @return the tick's scope
	 */
	default Scope tick(String runId) {
		return Scope.NOOP;
	}

	/**
	 * An effect intent is being recorded in the caller's transaction.
	 * @param effect the effect name
	 * @param receiver the receiver kind
	 * @param key the intent's idempotency key
	 * @return the recording, which carries the trace context to store with the intent
	 */
	default Recording schedule(String effect, String receiver, String key) {
		return Recording.NOOP;
	}

	/**
	 * One attempt of an intent starts, on the thread that runs it; the returned scope is
	 * current until closed, as a continuation of {@code traceContext} when there is one.
	 * @param attempt what the attempt runs
	 * @param traceContext the trace context stored with the intent when it was recorded
	 * (empty when none was)
	 * @return the attempt's scope
	 */
	default Scope dispatch(Attempt attempt, Map<String, String> traceContext) {
		return Scope.NOOP;
	}

	/**
	 * One reconciliation round of an intent whose outcome is unknown starts, on the
	 * thread that asks its reconciler; the returned scope is current until closed, as a
	 * continuation of {@code traceContext} when there is one, as an attempt's is.
	 * @param attempt the attempt whose outcome is unknown
	 * @param round the round, from 1
	 * @param traceContext the trace context stored with the intent (empty when none was)
	 * @return the round's scope
	 */
	default Scope reconcile(Attempt attempt, int round, Map<String, String> traceContext) {
		return Scope.NOOP;
	}

	/**
	 * An ingress reservation starts.
	 * @return its scope
	 */
	default Scope reserve() {
		return Scope.NOOP;
	}

	/**
	 * A round of a worker starts.
	 * @param worker the worker's name
	 * @return its scope
	 */
	default Scope workerRound(String worker) {
		return Scope.NOOP;
	}

	/**
	 * What one dispatch attempt runs.
	 *
	 * @param intentId the intent id
	 * @param effect the effect name
	 * @param receiver the receiver kind
	 * @param key the idempotency key
	 * @param attempt the attempt number, from 1
	 * @param runId the run whose tick recorded the intent, or {@code null}
	 */
	record Attempt(long intentId, String effect, String receiver, String key, int attempt, String runId) {
	}

	/**
	 * A unit of work being observed. Closed exactly once, on the thread that opened it.
	 */
	interface Scope extends AutoCloseable {

		/** A scope that records nothing. */
		Scope NOOP = new Scope() {
		};

		/**
		 * Say how the work ended, before {@link #close()}.
		 * @param outcome a low-cardinality outcome
		 */
		default void outcome(String outcome) {
		}

		/**
		 * Say that the work failed, before {@link #close()}.
		 * @param error what was thrown
		 */
		default void error(Throwable error) {
		}

		/** End the work: the scope is no longer current. */
		@Override
		default void close() {
		}

	}

	/**
	 * The recording of an intent: a scope that also tells what trace context to store.
	 */
	interface Recording extends Scope {

		/** A recording that records nothing and carries no trace context. */
		Recording NOOP = new Recording() {
		};

		/**
		 * @return the propagated fields of the current trace context
		 * ({@code traceparent}, {@code tracestate}, the application's propagated
		 * baggage), or an empty map when there is no tracer or no trace
		 */
		default Map<String, String> traceContext() {
			return Map.of();
		}

	}

}
