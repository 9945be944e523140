package io.ductor.worker.internal;

import java.time.Duration;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.context.SmartLifecycle;
import org.springframework.scheduling.concurrent.CustomizableThreadFactory;

import io.ductor.metrics.internal.DuctorObserver;
import io.ductor.observation.internal.DuctorObservations;

/**
 * Runs a {@link WorkerTask} on its own thread every {@code interval}, and at once when
 * {@linkplain #trigger() triggered} or when the task reports that more work is waiting. A
 * failing round is logged and retried at the next interval; it never stops the worker.
 * Started and stopped with the application context; stopping lets the current round
 * finish.
 * <p>
 * Workers hold no lock between rounds and are safe to run in several application
 * instances on one database: each task claims its rows with {@code SKIP LOCKED} or
 * idempotent updates.
 */
public class PeriodicWorker implements SmartLifecycle {

	/**
	 * Late start and early stop: workers run only while the rest of the application is
	 * up.
	 */
	public static final int PHASE = SmartLifecycle.DEFAULT_PHASE - 1024;

	/**
	 * How long Ductor's own workers wait, when stopping, for the round that is running.
	 */
	public static final Duration DEFAULT_SHUTDOWN_TIMEOUT = Duration.ofSeconds(10);

	private static final Log logger = LogFactory.getLog(PeriodicWorker.class);

	private final String name;

	private final Duration interval;

	private final WorkerTask task;

	private final Duration shutdownTimeout;

	private final DuctorObservations observations;

	private final WorkerRounds rounds;

	private final AtomicBoolean pending = new AtomicBoolean();

	private volatile ScheduledExecutorService executor;

	/**
	 * Create a worker.
	 * @param name the worker's name, used for its thread and in logs ("sweeper")
	 * @param interval the pause between rounds
	 * @param shutdownTimeout how long {@link #stop()} waits for a running round
	 * @param task the work
	 */
	public PeriodicWorker(String name, Duration interval, Duration shutdownTimeout, WorkerTask task) {
		this(name, interval, shutdownTimeout, task, DuctorObserver.NOOP);
	}

	/**
	 * Create a worker that reports its rounds.
	 * @param name the worker's name, used for its thread and in logs ("sweeper")
	 * @param interval the pause between rounds
	 * @param shutdownTimeout how long {@link #stop()} waits for a running round
	 * @param task the work
	 * @param observer what is told about every round
	 */
	public PeriodicWorker(String name, Duration interval, Duration shutdownTimeout, WorkerTask task,
			DuctorObserver observer) {
		this(name, interval, shutdownTimeout, task, observer, DuctorObservations.NOOP);
	}

	/**
	 * Create a worker that reports its rounds and has each of them observed.
	 * @param name the worker's name, used for its thread and in logs ("sweeper")
	 * @param interval the pause between rounds
	 * @param shutdownTimeout how long {@link #stop()} waits for a running round
	 * @param task the work
	 * @param observer what is told about every round
	 * @param observations where every round is observed while it runs
	 */
	public PeriodicWorker(String name, Duration interval, Duration shutdownTimeout, WorkerTask task,
			DuctorObserver observer, DuctorObservations observations) {
		if (interval.isNegative() || interval.isZero()) {
			throw new IllegalArgumentException("interval of worker '" + name + "' must be positive");
		}
		this.name = name;
		this.interval = interval;
		this.shutdownTimeout = shutdownTimeout;
		this.task = task;
		this.observations = observations;
		this.rounds = new WorkerRounds(name, observer);
	}

	/**
	 * @return the worker's name
	 */
	public String getName() {
		return this.name;
	}

	@Override
	public synchronized void start() {
		if (this.executor != null) {
			return;
		}
		ScheduledThreadPoolExecutor executor = new ScheduledThreadPoolExecutor(1,
				new CustomizableThreadFactory("ductor-" + this.name + "-"));
		executor.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
		this.rounds.started();
		// a round queued when the last stop cut the executor off never ran and never will
		this.pending.set(false);
		// published before the first round is scheduled: trigger() and runRounds() ignore
		// a null executor
		this.executor = executor;
		executor.scheduleWithFixedDelay(this::trigger, 0, this.interval.toNanos(), TimeUnit.NANOSECONDS);
	}

	/**
	 * Run a round as soon as possible. Triggers that arrive while a round is queued are
	 * merged into it.
	 */
	public void trigger() {
		ScheduledExecutorService executor = this.executor;
		if (executor != null && this.pending.compareAndSet(false, true)) {
			try {
				executor.execute(this::runRounds);
			}
			catch (RuntimeException ex) {
				// rejected: the worker is stopping
				this.pending.set(false);
			}
		}
	}

	private void runRounds() {
		this.pending.set(false);
		boolean more = true;
		while (more && isRunning() && !Thread.currentThread().isInterrupted()) {
			more = runRound();
		}
	}

	/**
	 * Run one round on the caller's thread, recording its outcome like a scheduled one.
	 * @return whether the task reported more waiting work
	 */
	public boolean runRound() {
		DuctorObservations.Scope scope = this.observations.workerRound(this.name);
		try {
			boolean more = this.task.runOnce();
			this.rounds.succeeded();
			scope.outcome("success");
			return more;
		}
		catch (Throwable ex) {
			scope.outcome("failure");
			scope.error(ex);
			this.rounds.failed(ex);
			logger.warn("Ductor worker '" + this.name + "' failed a round, retrying in " + this.interval, ex);
			return false;
		}
		finally {
			scope.close();
		}
	}

	@Override
	public synchronized void stop() {
		ScheduledExecutorService executor = this.executor;
		if (executor == null) {
			return;
		}
		this.executor = null;
		executor.shutdown();
		try {
			if (!executor.awaitTermination(this.shutdownTimeout.toMillis(), TimeUnit.MILLISECONDS)) {
				logger.warn("Ductor worker '" + this.name + "' did not finish its round within " + this.shutdownTimeout
						+ "; interrupting it");
				executor.shutdownNow();
			}
		}
		catch (InterruptedException ex) {
			executor.shutdownNow();
			Thread.currentThread().interrupt();
		}
	}

	@Override
	public boolean isRunning() {
		return this.executor != null;
	}

	@Override
	public int getPhase() {
		return PHASE;
	}

	/**
	 * @return what the worker has been doing
	 */
	public WorkerStatus status() {
		return this.rounds.status(isRunning(), this.interval);
	}

}
