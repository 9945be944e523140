package io.ductor.effect.internal;

import java.time.Duration;
import java.util.Iterator;
import java.util.List;
import java.util.Optional;
import java.util.Queue;
import java.util.UUID;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.function.Consumer;

import io.ductor.effect.EffectIntent;
import io.ductor.effect.internal.IntentClaims.ClaimedIntent;
import io.ductor.effect.internal.IntentOutcomes.Completion;

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
 * It can also take the place of the drainer for dispatch at commit
 * ({@link EffectTestSupport#dispatchAtCommitTo(CallingThreadDrainer)}): intents due at
 * commit are then recorded already leased to it, by the same writer and transaction
 * synchronization as in production, and what their transactions hand over at commit waits
 * in a queue for {@link #runHandedOver(String)} instead of going to a worker.
 * <p>
 * Obtained from {@link EffectTestSupport#callingThreadDrainer()}.
 */
public final class CallingThreadDrainer {

	private final IntentClaims claims;

	private final IntentOutcomes outcomes;

	private final IntentReads reads;

	private final IntentRedrive redrive;

	private final EffectDispatcher dispatcher;

	private final EffectRegistry registry;

	private final EffectReconciliation reconciliation;

	private final Consumer<List<Settled>> settledListener;

	private final Duration lease;

	private final int batchSize;

	private final String owner = "calling-thread/" + UUID.randomUUID().toString().substring(0, 8);

	/** Intents handed over at commit, in the order their transactions committed. */
	private final Queue<ClaimedIntent> handedOver = new ConcurrentLinkedQueue<>();

	/**
	 * Intents of transactions that rolled back to a savepoint or whose commit reported an
	 * error, to hand back to pending before the next step.
	 */
	private final Queue<List<ClaimedIntent>> toHandBack = new ConcurrentLinkedQueue<>();

	private final Handoff.Target handoffs = new Handoffs();

	CallingThreadDrainer(IntentClaims claims, IntentOutcomes outcomes, IntentReads reads, IntentRedrive redrive,
			EffectDispatcher dispatcher, EffectRegistry registry, EffectReconciliation reconciliation,
			Consumer<List<Settled>> settledListener, Duration lease, int batchSize) {
		this.claims = claims;
		this.outcomes = outcomes;
		this.reads = reads;
		this.redrive = redrive;
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
		List<ClaimedIntent> claimed = this.claims.claim(this.owner, this.lease, 1, effectName);
		if (claimed.isEmpty()) {
			return Optional.empty();
		}
		return run(claimed.get(0));
	}

	private Optional<EffectIntent> run(ClaimedIntent intent) {
		Completion completion = this.dispatcher.dispatch(intent,
				(started) -> this.outcomes.markStarted(this.owner, started.id(), started.attempt()));
		if (completion != null) {
			List<Settled> settled = this.outcomes.complete(this.owner, List.of(completion));
			this.settledListener.accept(settled);
		}
		return this.reads.find(intent.id());
	}

	/**
	 * Runs the next intent handed over at commit (of {@code effectName} only, when it is
	 * not {@code null}), first handing back what transactions that rolled back to a
	 * savepoint or reported an unknown commit left. It runs as the drainer's workers run
	 * what they are handed: with no further check, so a test sees what a production
	 * drainer would do.
	 * @param effectName the effect whose next intent runs, or {@code null} for any effect
	 * @return the intent after the attempt, or empty when none was handed over
	 */
	public Optional<EffectIntent> runHandedOver(String effectName) {
		for (List<ClaimedIntent> intents = this.toHandBack.poll(); intents != null; intents = this.toHandBack.poll()) {
			this.outcomes.handBack(this.owner, intents);
		}
		ClaimedIntent intent = take(effectName);
		return (intent != null) ? run(intent) : Optional.empty();
	}

	private ClaimedIntent take(String effectName) {
		for (Iterator<ClaimedIntent> intents = this.handedOver.iterator(); intents.hasNext();) {
			ClaimedIntent intent = intents.next();
			if (effectName == null || effectName.equals(intent.effectName())) {
				intents.remove();
				return intent;
			}
		}
		return null;
	}

	/**
	 * A place for an intent that a transaction records already leased to this drainer.
	 * @return the place; there is always room
	 */
	Handoff reserve() {
		return new Handoff(this.handoffs);
	}

	/**
	 * One round of the reconciler: in-flight intents whose lease expired are redriven,
	 * and one batch of due reconciliation rounds is asked.
	 * @return how many intents the round redrove or asked about
	 */
	public int reconcile() {
		List<Settled> redriven = this.redrive.redriveExpired(this.batchSize, this.registry.reconciledEffects(),
				this.registry.concurrencyLimits().keySet());
		if (!redriven.isEmpty()) {
			this.settledListener.accept(redriven);
		}
		return redriven.size() + this.reconciliation.reconcileDueCounted(this.settledListener);
	}

	/** What transactions hand this drainer at their completion. */
	private final class Handoffs implements Handoff.Target {

		@Override
		public String owner() {
			return CallingThreadDrainer.this.owner;
		}

		@Override
		public Duration lease() {
			return CallingThreadDrainer.this.lease;
		}

		@Override
		public void handOver(ClaimedIntent intent) {
			CallingThreadDrainer.this.handedOver.add(intent);
		}

		@Override
		public void release() {
			// no place is counted: there is always room
		}

		@Override
		public void handBack(List<ClaimedIntent> intents) {
			CallingThreadDrainer.this.toHandBack.add(List.copyOf(intents));
		}

	}

}
