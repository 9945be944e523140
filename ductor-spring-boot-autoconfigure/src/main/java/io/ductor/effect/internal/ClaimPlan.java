package io.ductor.effect.internal;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import io.ductor.effect.internal.IntentClaims.ClaimedIntent;

/**
 * How one drain session's claims share their batch. With concurrency-limited effects, a
 * claim shares the batch: the limited effects (each in a transaction of its own, never
 * more than its free slots, {@link EffectSlots}) take at most half of it, the larger half
 * and the smaller half in turn, and the other effects the rest; whatever one side leaves
 * unused goes to the other. So a backlog of limited intents never fills a batch while
 * other intents are due, nor the other way round.
 */
final class ClaimPlan {

	private final IntentClaims claims;

	private final EffectSlots slots;

	/** Which side of a shared batch gets the larger half at the next claim. */
	private final AtomicInteger turn = new AtomicInteger();

	ClaimPlan(IntentClaims claims, EffectSlots slots) {
		this.claims = claims;
		this.slots = slots;
	}

	/**
	 * Claims up to {@code limit} due intents for {@code owner}; with concurrency-limited
	 * effects, asks for the intents of the other effects only when {@code others} says so
	 * (the limited ones may then fill the batch). Finding the others' due intents reads
	 * past every due intent of a limited effect, which a backlog of those makes costly: a
	 * drainer asks when it has reason to believe some are due (a commit, a notification,
	 * a poll, or a full batch of them last time), not every time a slot frees.
	 * @return the intents claimed, and what was learnt of the other effects' due intents
	 */
	ClaimedBatch claim(String owner, Duration lease, int limit, boolean others) {
		EffectSlots limited = this.slots;
		if (limited.limits().isEmpty()) {
			List<ClaimedIntent> claimed = this.claims.claim(owner, lease, limit);
			return new ClaimedBatch(claimed, true, claimed.size() == limit);
		}
		int share = others ? (limit + (this.turn.getAndIncrement() & 1)) / 2 : limit;
		List<ClaimedIntent> claimed = new ArrayList<>(limited.claim(this.claims, owner, lease, share));
		boolean limitedLeft = claimed.size() == share;
		int room = limit - claimed.size();
		boolean othersAsked = others && room > 0;
		boolean othersLeft = false;
		if (othersAsked) {
			List<ClaimedIntent> other = this.claims.claimExcept(owner, lease, room, limited.limits().keySet());
			othersLeft = other.size() == room;
			claimed.addAll(other);
		}
		if (limitedLeft && claimed.size() < limit) {
			// the other effects left room: the limited ones may use it
			claimed.addAll(limited.claim(this.claims, owner, lease, limit - claimed.size()));
		}
		return new ClaimedBatch(claimed, othersAsked, othersLeft);
	}

	/**
	 * What one claim took.
	 *
	 * @param intents the intents claimed
	 * @param othersAsked whether the intents of the effects without a concurrency limit
	 * were asked for
	 * @param othersLeft whether they filled the room they were given: more may be due
	 */
	record ClaimedBatch(List<ClaimedIntent> intents, boolean othersAsked, boolean othersLeft) {
	}

}
