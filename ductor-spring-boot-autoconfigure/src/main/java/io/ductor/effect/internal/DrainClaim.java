package io.ductor.effect.internal;

import io.ductor.effect.internal.IntentClaims.ClaimedIntent;

/**
 * One claimed attempt held by a drain session, from its claim until its outcome is
 * recorded. Compared by identity: the same intent claimed again (after its earlier claim
 * lost its lease) is another claim.
 */
public final class DrainClaim {

	private final ClaimedIntent intent;

	/**
	 * Its outcome is being recorded: the row may be settled before the heartbeat reads
	 * it.
	 */
	volatile boolean settling;

	/** Its lease was found lost, and counted. */
	volatile boolean lost;

	DrainClaim(ClaimedIntent intent) {
		this.intent = intent;
	}

	ClaimedIntent intent() {
		return this.intent;
	}

	long id() {
		return this.intent.id();
	}

}
