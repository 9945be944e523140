package io.ductor.effect;

import java.util.List;
import java.util.function.Consumer;

import io.ductor.effect.IntentStore.Settled;
import io.ductor.worker.WorkerTask;

/**
 * The reconciler's round: in-flight intents whose lease expired (their drainer crashed, paused or
 * lost its database) go back to {@code pending}, or to {@code needs_decision} when their receiver
 * cannot deduplicate; a superseded alarm occurrence that would go back to pending is cancelled.
 * An intent that cannot be redriven (it breaks a constraint) is failed with the reason, and the
 * rest of the round's batch is redriven.
 */
class LeaseReconciler implements WorkerTask {

	private final IntentStore store;

	private final int batchSize;

	private final Consumer<List<Settled>> settledListener;

	LeaseReconciler(IntentStore store, int batchSize, Consumer<List<Settled>> settledListener) {
		this.store = store;
		this.batchSize = batchSize;
		this.settledListener = settledListener;
	}

	@Override
	public boolean runOnce() {
		List<Settled> redriven = this.store.redriveExpired(this.batchSize);
		if (!redriven.isEmpty()) {
			this.settledListener.accept(redriven);
		}
		return redriven.size() == this.batchSize;
	}

}
