package io.ductor.metrics.internal;

/**
 * What Ductor reports as it works: ticks, effects scheduled and dispatched, worker
 * rounds, reservations and their releases. The Micrometer implementation turns it into
 * meters; without Micrometer the no-op one is used. Implementations must be fast and must
 * not throw.
 */
public interface DuctorObserver {

	/** Observes nothing. */
	DuctorObserver NOOP = new DuctorObserver() {
	};

	/**
	 * A tick finished.
	 * @param outcome {@code applied}, {@code duplicate}, {@code terminal} or
	 * {@code conflict}
	 * @param attempts how often it was computed
	 */
	default void tick(String outcome, int attempts) {
	}

	/**
	 * An intent was committed.
	 * @param effect the effect name
	 */
	default void effectScheduled(String effect) {
	}

	/**
	 * An attempt of an effect ended.
	 * @param effect the effect name
	 * @param outcome {@code completed}, {@code retry}, {@code failed},
	 * {@code needs_decision} or {@code reconciling} (unknown, its reconciler is asked)
	 * @param nanos how long the effect ran
	 */
	default void effectDispatched(String effect, String outcome, long nanos) {
	}

	/**
	 * An effect's reconciler answered about an attempt whose outcome was unknown.
	 * @param effect the effect name
	 * @param outcome {@code applied}, {@code not_applied}, {@code unknown} or
	 * {@code failed} (it threw)
	 */
	default void effectReconciled(String effect, String outcome) {
	}

	/**
	 * A first attempt started.
	 * @param effect the effect name
	 * @param millis from the commit that recorded the intent to the claim, by the
	 * database clock
	 */
	default void effectLag(String effect, double millis) {
	}

	/**
	 * A worker finished a round.
	 * @param worker the worker's name ({@code heartbeat} for the drainer's lease
	 * extension)
	 * @param success whether the round completed without error
	 */
	default void workerRound(String worker, boolean success) {
	}

	/**
	 * A drainer found leases it held lost while their attempts were claimed or running:
	 * they expired and were redriven, or another drainer holds the intents now. The
	 * attempts' outcomes are fenced off.
	 * @param leases how many leases were found lost
	 */
	default void drainerLeaseLost(int leases) {
	}

	/**
	 * A reservation call returned.
	 * @param outcome {@code reserved}, {@code replay}, {@code in_flight},
	 * {@code fingerprint_mismatch} or {@code opted_out}
	 */
	default void reservation(String outcome) {
	}

	/**
	 * Pending reservations were released so that a retry with their key runs again.
	 * @param reason why, see {@code io.ductor.idempotency.ReleaseReason}: {@code swept},
	 * {@code handler_failed}, {@code completion_failed}, {@code rolled_back},
	 * {@code server_error}, {@code not_storable}, {@code too_large} or
	 * {@code failed_by_owner}
	 * @param count how many
	 */
	default void released(String reason, int count) {
	}

	/**
	 * A scheduler round recorded the due occurrences of a recurring alarm.
	 * @param alarm the alarm
	 * @param recorded how many occurrences it recorded
	 * @param missed whether it found occurrences missed (skipped, or folded into one)
	 */
	default void alarmOccurrences(String alarm, int recorded, boolean missed) {
	}

}
