package io.ductor.docs;

import java.util.List;

import io.ductor.effect.EffectIntent;
import io.ductor.effect.EffectOutbox;
import io.ductor.effect.EffectStatus;

/**
 * The Java block of {@code docs/operations.md}, compiled against Ductor's API.
 */
class OperationsPageSnippets {

	EffectOutbox outbox;

	List<EffectIntent> undecided() {
		// tag::operations-parked-intents[]
		List<EffectIntent> undecided = this.outbox.list(EffectStatus.NEEDS_DECISION, 0, 100);
		// end::operations-parked-intents[]
		return undecided;
	}

}
