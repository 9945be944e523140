package io.ductor.worker.internal;

import java.util.List;

/**
 * The retention worker's round: one batch from every {@link RetentionPurger}; another
 * round at once while any of them still fills its batch.
 */
public class RetentionTask implements WorkerTask {

	private final List<RetentionPurger> purgers;

	private final int batchSize;

	public RetentionTask(List<RetentionPurger> purgers, int batchSize) {
		this.purgers = List.copyOf(purgers);
		this.batchSize = batchSize;
	}

	@Override
	public boolean runOnce() {
		boolean more = false;
		for (RetentionPurger purger : this.purgers) {
			more |= purger.purge(this.batchSize) >= this.batchSize;
		}
		return more;
	}

}
