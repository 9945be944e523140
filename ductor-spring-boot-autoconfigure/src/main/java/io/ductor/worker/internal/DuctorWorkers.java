package io.ductor.worker.internal;

import java.util.List;
import java.util.function.Supplier;

/**
 * The workers of this instance (the drainer and the periodic workers), whose statuses
 * health and the endpoint show.
 */
public final class DuctorWorkers {

	private final List<Supplier<WorkerStatus>> statuses;

	/**
	 * Create the list of this instance's workers.
	 * @param statuses how to read each worker's status
	 */
	public DuctorWorkers(List<Supplier<WorkerStatus>> statuses) {
		this.statuses = List.copyOf(statuses);
	}

	/**
	 * How to read each worker's status, drainer first.
	 * @return one supplier per worker
	 */
	public List<Supplier<WorkerStatus>> statuses() {
		return this.statuses;
	}

}
