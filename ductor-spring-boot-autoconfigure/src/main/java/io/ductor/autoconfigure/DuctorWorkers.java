package io.ductor.autoconfigure;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

import org.springframework.beans.factory.ObjectProvider;

import io.ductor.effect.EffectDrainer;
import io.ductor.worker.PeriodicWorker;
import io.ductor.worker.WorkerStatus;

/** The statuses of this instance's workers, for health and the endpoint. */
final class DuctorWorkers {

	private DuctorWorkers() {
	}

	static List<Supplier<WorkerStatus>> statuses(ObjectProvider<PeriodicWorker> workers,
			ObjectProvider<EffectDrainer> drainer) {
		List<Supplier<WorkerStatus>> statuses = new ArrayList<>();
		drainer.orderedStream().forEach((bean) -> statuses.add(bean::status));
		workers.orderedStream().forEach((bean) -> statuses.add(bean::status));
		return statuses;
	}

}
