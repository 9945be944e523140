package io.ductor.worker.internal;

import java.time.Duration;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantLock;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.context.SmartLifecycle;

import io.ductor.metrics.internal.DuctorObserver;
import io.ductor.observation.internal.DuctorInstrumentation;
import io.ductor.observation.internal.DuctorObservations;

/**
 * Runs a {@link WorkerTask} every {@code interval}, and at once when
 * {@linkplain #trigger() triggered} or when the task reports that more work is waiting;
 * one round at a time. A failing round is logged and retried at the next interval; it
 * never stops the worker. Started and stopped with the application context; stopping lets
 * the current round finish within Ductor's shutdown deadline, then interrupts it.
 * <p>
 * Its timer runs on Ductor's one scheduler and its rounds on Ductor's round threads
 * ({@link DuctorThreads}): a worker holds no thread of its own.
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

	private static final Log logger = LogFactory.getLog(PeriodicWorker.class);

	private static final int IDLE = 0;

	private static final int RUNNING = 1;

	private static final int RUNNING_AND_ASKED_AGAIN = 2;

	/** One round at a time, scheduled or asked for. */
	private final ReentrantLock roundMutex = new ReentrantLock();

	private final DuctorThreads threads;

	private final String name;

	private final Duration interval;

	private final WorkerTask task;

	private final DuctorObservations observations;

	private final WorkerRounds rounds;

	/**
	 * Whether rounds are queued or running ({@link #RUNNING}), and asked for again
	 * meanwhile ({@link #RUNNING_AND_ASKED_AGAIN}): triggers that arrive then are merged
	 * into one more round, and two rounds never run at once.
	 */
	private final AtomicInteger state = new AtomicInteger(IDLE);

	private final Object roundLock = new Object();

	/** The thread running this worker's rounds, while it does. */
	private @Nullable Thread roundThread;

	private volatile boolean running;

	private @Nullable ScheduledFuture<?> timer;

	/**
	 * Create a worker that reports its rounds and has each of them observed.
	 * @param threads where its timer and its rounds run, and the deadline of its stop
	 * @param name the worker's name, used in logs ("sweeper")
	 * @param interval the pause between rounds
	 * @param task the work
	 * @param instrumentation the meters and observations of its work
	 */
	public PeriodicWorker(DuctorThreads threads, String name, Duration interval, WorkerTask task,
			DuctorInstrumentation instrumentation) {
		if (interval.isNegative() || interval.isZero()) {
			throw new IllegalArgumentException("interval of worker '" + name + "' must be positive");
		}
		this.threads = threads;
		this.name = name;
		this.interval = interval;
		this.task = task;
		this.observations = instrumentation.observations();
		this.rounds = new WorkerRounds(name, instrumentation.metrics());
	}

	/**
	 * @return the worker's name
	 */
	public String getName() {
		return this.name;
	}

	@Override
	public synchronized void start() {
		if (this.running) {
			return;
		}
		this.rounds.started();
		// set before the first round: trigger() and runRounds() do nothing while the
		// worker is not running
		this.running = true;
		this.timer = this.threads.scheduler()
			.scheduleWithFixedDelay(this::timerFired, 0, this.interval.toNanos(), TimeUnit.NANOSECONDS);
	}

	/**
	 * On the scheduler's thread, which beats the drainer's heartbeat too: only hands the
	 * round to a round thread.
	 */
	private void timerFired() {
		trigger();
	}

	/**
	 * Run a round as soon as possible. Triggers that arrive while a round is queued or
	 * running are merged into one more round.
	 */
	public void trigger() {
		if (!this.running) {
			return;
		}
		while (true) {
			int state = this.state.get();
			if (state == RUNNING_AND_ASKED_AGAIN) {
				return;
			}
			if (state == RUNNING) {
				if (this.state.compareAndSet(RUNNING, RUNNING_AND_ASKED_AGAIN)) {
					return;
				}
				continue;
			}
			if (this.state.compareAndSet(IDLE, RUNNING)) {
				try {
					this.threads.rounds().execute(this::runRounds);
				}
				catch (RuntimeException ex) {
					// rejected: Ductor is stopping
					this.state.set(IDLE);
				}
				return;
			}
		}
	}

	private void runRounds() {
		synchronized (this.roundLock) {
			this.roundThread = Thread.currentThread();
		}
		boolean idle = false;
		try {
			do {
				this.state.set(RUNNING);
				boolean more = true;
				while (more && isRunning() && !Thread.currentThread().isInterrupted()) {
					more = runRound();
				}
				idle = this.state.compareAndSet(RUNNING, IDLE);
			}
			while (!idle && isRunning());
		}
		finally {
			if (!idle) {
				// stopped: whatever was asked meanwhile is dropped with the timer
				this.state.set(IDLE);
			}
			synchronized (this.roundLock) {
				this.roundThread = null;
				this.roundLock.notifyAll();
			}
		}
	}

	/**
	 * Run one round on the caller's thread, recording its outcome like a scheduled one.
	 * @return whether the task reported more waiting work
	 */
	public boolean runRound() {
		// a round asked for on another thread (a test's, the tester's) waits for the
		// scheduled one under way, so that it sees what was committed before it was asked
		this.roundMutex.lock();
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
			this.roundMutex.unlock();
		}
	}

	/**
	 * Stops the timer and waits for the round under way until Ductor's shutdown deadline,
	 * then interrupts it.
	 */
	@Override
	public synchronized void stop() {
		if (!this.running) {
			return;
		}
		DuctorThreads.Deadline deadline = this.threads.stopDeadline();
		this.running = false;
		if (this.timer != null) {
			this.timer.cancel(false);
		}
		this.timer = null;
		synchronized (this.roundLock) {
			while (this.roundThread != null && !deadline.remaining().isZero()) {
				try {
					this.roundLock.wait(Math.max(1, deadline.remaining().toMillis()));
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
					break;
				}
			}
			if (this.roundThread != null) {
				logger.warn("Ductor worker '" + this.name + "' did not finish its round within the shutdown deadline ("
						+ this.threads.shutdownTimeout() + "); interrupting it");
				this.roundThread.interrupt();
			}
		}
	}

	@Override
	public boolean isRunning() {
		return this.running;
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
