package io.ductor.effect.internal;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.function.Consumer;

import io.ductor.effect.EffectIntent;
import io.ductor.effect.internal.IntentStore.ClaimedIntent;
import io.ductor.effect.internal.IntentStore.Completion;
import io.ductor.effect.internal.IntentStore.Settled;

/**
 * Runs the drainer's and the reconciler's work on the calling thread, one step at a time,
 * for tests in which the background drainer is off
 * ({@code ductor.effects.drainer.enabled=false}): the same claim under a lease, the same
 * dispatch (with {@link EffectContext}, the started mark of receivers that cannot
 * deduplicate, the classification of failures) and the same completion fenced by lease
 * owner and attempt as the drainer, and the same redrive of expired leases and
 * reconciliation rounds as the reconciler. Nothing runs in the background, so what a step
 * did is done when it returns.
 * <p>
 * Obtained from {@link DurableEffects#callingThreadDrainer()}.
 */
public final class CallingThreadDrainer {

	private final IntentStore store;

	private final EffectDispatcher dispatcher;

	private final EffectRegistry registry;

	private final EffectReconciliation reconciliation;

	private final Consumer<List<Settled>> settledListener;

	private final Duration lease;

	private final int batchSize;

	private final String owner = "calling-thread/" + UUID.randomUUID().toString().substring(0, 8);

	CallingThreadDrainer(IntentStore store, EffectDispatcher dispatcher, EffectRegistry registry,
			EffectReconciliation reconciliation, Consumer<List<Settled>> settledListener, Duration lease,
			int batchSize) {
		this.store = store;
		this.dispatcher = dispatcher;
		this.registry = registry;
		this.reconciliation = reconciliation;
		this.settledListener = settledListener;
		this.lease = lease;
		this.batchSize = batchSize;
	}

	/**
	 * Claims the next due intent (of {@code effectName} only, when it is not
	 * {@code null}), runs one attempt of it on this thread and records the outcome.
	 * @param effectName the effect whose next due intent runs, or {@code null} for any
	 * effect
	 * @return the intent after the attempt, or empty when none was due
	 */
	public Optional<EffectIntent> runNext(String effectName) {
		List<ClaimedIntent> claimed = this.store.claim(this.owner, this.lease, 1, effectName);
		if (claimed.isEmpty()) {
			return Optional.empty();
		}
		ClaimedIntent intent = claimed.get(0);
		Completion completion = this.dispatcher.dispatch(intent,
				(started) -> this.store.markStarted(this.owner, started.id(), started.attempt()));
		if (completion != null) {
			List<Settled> settled = this.store.complete(this.owner, List.of(completion));
			this.settledListener.accept(settled);
		}
		return this.store.find(intent.id());
	}

	/**
	 * One round of the reconciler: in-flight intents whose lease expired are redriven,
	 * and one batch of due reconciliation rounds is asked.
	 * @return how many intents the round redrove or asked about
	 */
	public int reconcile() {
		List<Settled> redriven = this.store.redriveExpired(this.batchSize, this.registry.reconciledEffects());
		if (!redriven.isEmpty()) {
			this.settledListener.accept(redriven);
		}
		return redriven.size() + this.reconciliation.reconcileDueCounted(this.settledListener);
	}

}
