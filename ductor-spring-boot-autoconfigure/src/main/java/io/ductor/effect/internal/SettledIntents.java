package io.ductor.effect.internal;

import java.util.List;
import java.util.function.Consumer;

import org.springframework.context.ApplicationEventPublisher;

import io.ductor.effect.EffectNeedsDecisionEvent;
import io.ductor.effect.EffectStatus;

/**
 * What follows intents settled by the drainer, the reconciler or a calling-thread
 * drainer: an {@link EffectNeedsDecisionEvent} for each that waits for a decision, and a
 * wake-up of the local drainer when one is due again, or a compensation waits for one.
 */
public final class SettledIntents implements Consumer<List<Settled>> {

	private final ApplicationEventPublisher events;

	private final LocalDrainer drainer;

	public SettledIntents(ApplicationEventPublisher events, LocalDrainer drainer) {
		this.events = events;
		this.drainer = drainer;
	}

	@Override
	public void accept(List<Settled> settled) {
		boolean due = false;
		for (Settled intent : settled) {
			if (intent.status() == EffectStatus.NEEDS_DECISION) {
				this.events.publishEvent(new EffectNeedsDecisionEvent(intent.id(), intent.effectName(), intent.key()));
			}
			// pending again, or a compensation waits for it
			due |= intent.status() == EffectStatus.PENDING || intent.compensated();
		}
		if (due) {
			this.drainer.wakeUp();
		}
	}

}
