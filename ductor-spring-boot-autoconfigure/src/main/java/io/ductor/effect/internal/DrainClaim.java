package io.ductor.effect.internal;

import io.ductor.effect.internal.IntentClaims.ClaimedIntent;

/**
 * One claimed attempt held by a drain session, from its claim until its outcome is
 * recorded. Compared by identity: the same intent claimed again (after its earlier claim
 * lost its lease) is another claim.
 */
public final class DrainClaim {

	private final ClaimedIntent intent;

	private final boolean recordedLeased;

	/**
	 * Its outcome is being recorded: the row may be settled before the heartbeat reads
	 * it.
	 */
	volatile boolean settling;

	/** Its lease was found lost, and counted. */
	volatile boolean lost;

	DrainClaim(ClaimedIntent intent, boolean recordedLeased) {
		this.intent = intent;
		this.recordedLeased = recordedLeased;
	}

	ClaimedIntent intent() {
		return this.intent;
	}

	long id() {
		return this.intent.id();
	}

	/**
	 * Whether its settling may make another intent due: an intent of a run (a
	 * compensation waits for its original) or one that was claimed (it may have an
	 * ordering key, whose next intent waits for it). An intent recorded leased at its
	 * commit has no ordering key; a compensation waiting for one outside a run is
	 * reported by the completion itself ({@link Settled#compensated()}).
	 */
	boolean mayReleaseOthers() {
		return !this.recordedLeased || this.intent.runId() != null;
	}

}
