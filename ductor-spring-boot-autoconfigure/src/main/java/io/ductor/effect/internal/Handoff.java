package io.ductor.effect.internal;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.ductor.effect.internal.IntentClaims.ClaimedIntent;

/**
 * One place reserved for an intent that a transaction records already leased to a drainer
 * (dispatch at commit): handed over when that transaction commits, given up when it rolls
 * back, and handed back to {@code pending} when it committed but which of its intents
 * exist is not known (it rolled back to a savepoint), or when whether it committed at all
 * is not known (its commit reported an error).
 */
final class Handoff {

	/**
	 * Where reserved intents go: the workers of a drain session, or the queue of a
	 * calling-thread drainer.
	 */
	interface Target {

		/**
		 * @return the lease owner to record the intent under
		 */
		String owner();

		/**
		 * @return how long the recorded lease lasts, from the database clock
		 */
		Duration lease();

		/**
		 * The transaction committed: run the intent.
		 * @param intent the intent, claimed by {@link #owner()}, attempt 1
		 */
		void handOver(ClaimedIntent intent);

		/**
		 * The place is given up: the intent was not recorded leased, or never existed.
		 */
		void release();

		/**
		 * Return these intents to {@code pending}, those of them that exist and are still
		 * leased to {@link #owner()}, attempt not started; the others are left alone.
		 * Never on the thread that completes the transaction: its connection still
		 * belongs to the finished transaction.
		 * @param intents the intents
		 */
		void handBack(List<ClaimedIntent> intents);

	}

	private final Target target;

	Handoff(Target target) {
		this.target = target;
	}

	String owner() {
		return this.target.owner();
	}

	Duration lease() {
		return this.target.lease();
	}

	/** The transaction committed: run the intent. */
	void handOver(ClaimedIntent intent) {
		this.target.handOver(intent);
	}

	/** The intent was not recorded leased, or its transaction did not commit. */
	void cancel() {
		this.target.release();
	}

	/**
	 * Hands these intents back to {@code pending}, grouped by target.
	 * @param handoffs the places
	 * @param intents the intent recorded in each place
	 */
	static void handBack(List<Handoff> handoffs, List<ClaimedIntent> intents) {
		Map<Target, List<ClaimedIntent>> byTarget = new LinkedHashMap<>();
		for (int i = 0; i < handoffs.size(); i++) {
			byTarget.computeIfAbsent(handoffs.get(i).target, (target) -> new ArrayList<>()).add(intents.get(i));
		}
		byTarget.forEach(Target::handBack);
	}

}
