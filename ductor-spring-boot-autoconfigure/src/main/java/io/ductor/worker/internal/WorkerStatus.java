package io.ductor.worker.internal;

import java.time.Duration;
import java.time.Instant;

/**
 * What a worker has been doing, for health checks and operators.
 *
 * @param name the worker's name
 * @param running whether the worker is started
 * @param interval the pause between rounds
 * @param startedAt when the worker last started, or {@code null}
 * @param rounds how many rounds finished, successfully or not
 * @param lastCompletedAt when a round last finished without error, or {@code null}
 * @param lastFailedAt when a round last failed, or {@code null}
 * @param lastError the last failure's message, or {@code null}
 */
public record WorkerStatus(String name, boolean running, Duration interval, Instant startedAt, long rounds,
		Instant lastCompletedAt, Instant lastFailedAt, String lastError) {
}
