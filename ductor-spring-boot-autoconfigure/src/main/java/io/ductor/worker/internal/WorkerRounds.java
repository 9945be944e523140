package io.ductor.worker.internal;

import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.atomic.AtomicLong;

import io.ductor.metrics.internal.DuctorObserver;

/**
 * The round statistics of one worker, the same for every worker: when it started, how
 * many rounds ended, when one last succeeded and last failed, and why. Every round's end
 * is also told to the {@link DuctorObserver} ({@code ductor.worker.rounds}).
 */
public final class WorkerRounds {

	private final String name;

	private final DuctorObserver observer;

	private final AtomicLong rounds = new AtomicLong();

	private volatile Instant startedAt;

	private volatile Instant lastCompletedAt;

	private volatile Instant lastFailedAt;

	private volatile String lastError;

	/**
	 * @param name the worker's name, in its status and meters
	 * @param observer what is told about every round
	 */
	public WorkerRounds(String name, DuctorObserver observer) {
		this.name = name;
		this.observer = observer;
	}

	/**
	 * @return the worker's name
	 */
	public String name() {
		return this.name;
	}

	/** The worker (re)started now. */
	public void started() {
		this.startedAt = Instant.now();
	}

	/** A round ended without error. */
	public void succeeded() {
		this.lastCompletedAt = Instant.now();
		this.observer.workerRound(this.name, true);
		this.rounds.incrementAndGet();
	}

	/**
	 * A round failed.
	 * @param failure why
	 */
	public void failed(Throwable failure) {
		this.lastFailedAt = Instant.now();
		this.lastError = String.valueOf(failure.getMessage());
		this.observer.workerRound(this.name, false);
		this.rounds.incrementAndGet();
	}

	/**
	 * @param running whether the worker is started
	 * @param interval the pause between its rounds
	 * @return what the worker has been doing
	 */
	public WorkerStatus status(boolean running, Duration interval) {
		return new WorkerStatus(this.name, running, interval, this.startedAt, this.rounds.get(), this.lastCompletedAt,
				this.lastFailedAt, this.lastError);
	}

}
