package io.ductor.effect.internal;

import java.util.List;
import java.util.function.Consumer;

import io.ductor.worker.internal.WorkerTask;

/**
 * The reconciler's round: in-flight intents whose lease expired (their drainer crashed,
 * paused or lost its database) go back to {@code pending}, or to {@code needs_decision}
 * when their receiver cannot deduplicate, or to {@code reconciling} when their effect has
 * an {@link EffectReconciler}; a superseded alarm occurrence that would go back to
 * pending is cancelled. Then the due reconciliation rounds are asked
 * ({@link EffectReconciliation}). An intent that cannot be redriven (it breaks a
 * constraint) is failed with the reason, and the rest of the round's batch is redriven.
 */
public class ExpiredLeaseRedriver implements WorkerTask {

	private final IntentRedrive redrive;

	private final int batchSize;

	private final Consumer<List<Settled>> settledListener;

	private final EffectRegistry registry;

	private final EffectReconciliation reconciliation;

	public ExpiredLeaseRedriver(IntentRedrive redrive, int batchSize, Consumer<List<Settled>> settledListener,
			EffectRegistry registry, EffectReconciliation reconciliation) {
		this.redrive = redrive;
		this.batchSize = batchSize;
		this.settledListener = settledListener;
		this.registry = registry;
		this.reconciliation = reconciliation;
	}

	@Override
	public boolean runOnce() {
		List<Settled> redriven = this.redrive.redriveExpired(this.batchSize, this.registry.reconciledEffects(),
				this.registry.concurrencyLimits().keySet());
		if (!redriven.isEmpty()) {
			this.settledListener.accept(redriven);
		}
		boolean moreRounds = this.reconciliation.reconcileDue(this.settledListener);
		return redriven.size() == this.batchSize || moreRounds;
	}

}
