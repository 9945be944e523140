package io.ductor.docs;

import java.util.List;

import io.ductor.effect.EffectIntent;
import io.ductor.effect.EffectOperations;
import io.ductor.effect.EffectStatus;

/**
 * The Java block of {@code docs/operations.md}, compiled against Ductor's API.
 */
class OperationsPageSnippets {

	EffectOperations operations;

	List<EffectIntent> undecided() {
		// tag::operations-parked-intents[]
		List<EffectIntent> undecided = this.operations.list(EffectStatus.NEEDS_DECISION, 0, 100);
		// end::operations-parked-intents[]
		return undecided;
	}

}
