package io.ductor.health.internal;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;

import io.ductor.metrics.internal.DuctorBacklog;
import io.ductor.worker.internal.WorkerStatus;

/**
 * The {@code ductor} health contributor: DOWN when Ductor's tables cannot be read, when a
 * worker has not completed a round within three of its intervals (at least
 * {@value #MIN_STALL_SECONDS} seconds), and, when thresholds are set, when the oldest due
 * intent waits too long or too many intents are parked. Details show the backlog and each
 * worker's last round.
 */
public class DuctorHealthIndicator extends AbstractHealthIndicator {

	static final long MIN_STALL_SECONDS = 5;

	private final DuctorBacklog backlog;

	private final List<Supplier<WorkerStatus>> workers;

	private final Duration maxOldestAge;

	private final Integer maxParked;

	/**
	 * @param backlog the backlog queries
	 * @param workers the statuses of this instance's workers
	 * @param maxOldestAge DOWN when the oldest due intent waits longer, or {@code null}
	 * for never
	 * @param maxParked DOWN when more intents are failed or undecided, or {@code null}
	 * for never
	 */
	public DuctorHealthIndicator(DuctorBacklog backlog, List<Supplier<WorkerStatus>> workers, Duration maxOldestAge,
			Integer maxParked) {
		super("Ductor health check failed");
		this.backlog = backlog;
		this.workers = List.copyOf(workers);
		this.maxOldestAge = maxOldestAge;
		this.maxParked = maxParked;
	}

	@Override
	protected void doHealthCheck(Health.Builder builder) {
		DuctorBacklog.Snapshot snapshot = this.backlog.refresh();
		Map<String, Object> backlog = new LinkedHashMap<>();
		backlog.put("pendingIntents", snapshot.pendingIntents());
		backlog.put("pendingEstimated", snapshot.pendingEstimated());
		backlog.put("oldestDueAge", snapshot.oldestDueAge().toString());
		backlog.put("inFlight", snapshot.inFlight());
		backlog.put("failed", snapshot.failed());
		backlog.put("needsDecision", snapshot.needsDecision());
		backlog.put("reconciling", snapshot.reconciling());
		backlog.put("pendingReservations", snapshot.pendingReservations());
		builder.up().withDetail("backlog", backlog);

		List<String> reasons = new ArrayList<>();
		Map<String, Object> workers = new LinkedHashMap<>();
		for (Supplier<WorkerStatus> supplier : this.workers) {
			WorkerStatus status = supplier.get();
			boolean stalled = stalled(status);
			Map<String, Object> detail = new LinkedHashMap<>();
			detail.put("running", status.running());
			detail.put("interval", status.interval().toString());
			detail.put("rounds", status.rounds());
			detail.put("lastCompletedAt", String.valueOf(status.lastCompletedAt()));
			if (status.lastError() != null) {
				detail.put("lastFailedAt", String.valueOf(status.lastFailedAt()));
				detail.put("lastError", status.lastError());
			}
			detail.put("stalled", stalled);
			workers.put(status.name(), detail);
			if (stalled) {
				reasons.add("worker '" + status.name() + "' has not completed a round within three of its intervals");
			}
		}
		builder.withDetail("workers", workers);

		if (this.maxOldestAge != null && snapshot.oldestDueAge().compareTo(this.maxOldestAge) > 0) {
			reasons.add("the oldest due intent has waited " + snapshot.oldestDueAge()
					+ ", more than ductor.health.max-oldest-age (" + this.maxOldestAge + ")");
		}
		if (this.maxParked != null && snapshot.parked() > this.maxParked) {
			reasons.add(snapshot.parked() + " intents are failed or need a decision, more than "
					+ "ductor.health.max-parked (" + this.maxParked + ")");
		}
		if (!reasons.isEmpty()) {
			builder.down().withDetail("reasons", reasons);
		}
	}

	private static boolean stalled(WorkerStatus status) {
		if (!status.running()) {
			return false;
		}
		Duration limit = status.interval().multipliedBy(3);
		if (limit.getSeconds() < MIN_STALL_SECONDS) {
			limit = Duration.ofSeconds(MIN_STALL_SECONDS);
		}
		Instant since = (status.lastCompletedAt() != null) ? status.lastCompletedAt() : status.startedAt();
		return since != null && Duration.between(since, Instant.now()).compareTo(limit) > 0;
	}

}
