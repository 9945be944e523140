package io.ductor.effect;

import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.context.SmartLifecycle;
import org.springframework.scheduling.concurrent.CustomizableThreadFactory;

import io.ductor.effect.IntentStore.ClaimedIntent;
import io.ductor.effect.IntentStore.Completion;
import io.ductor.effect.IntentStore.Settled;
import io.ductor.metrics.DuctorObserver;
import io.ductor.worker.PeriodicWorker;
import io.ductor.worker.WorkerStatus;

/**
 * Drains the outbox. A claim thread claims due intents in batches (one short statement each),
 * hands them to a bounded pool that runs the effects outside any transaction, and a completion
 * thread records their outcomes in batches with updates fenced by lease owner and attempt.
 * <p>
 * It wakes when a local transaction that recorded an intent commits, when
 * {@link #wakeUp()} is called (for example on a PostgreSQL notification from another instance),
 * and every poll interval as a fallback. While it holds claims it extends their leases every third
 * of the lease, from the database clock. Stopping it stops claiming, lets running effects finish
 * within the shutdown timeout and hands claimed-but-unstarted intents back.
 */
public class EffectDrainer implements SmartLifecycle {

	private static final Log logger = LogFactory.getLog(EffectDrainer.class);

	private static final int MAX_COMPLETION_BATCH = 1000;

	private static final long CLAIM_GATHER_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

	private static final Duration CLAIM_STOP_TIMEOUT = Duration.ofSeconds(2);

	private final IntentStore store;

	private final EffectDispatcher dispatcher;

	private final Consumer<List<Settled>> settledListener;

	private final Settings settings;

	private final DuctorObserver observer;

	private final String owner;

	private final AtomicLong rounds = new AtomicLong();

	private volatile Instant startedAt;

	private volatile Instant lastCompletedAt;

	private volatile Instant lastFailedAt;

	private volatile String lastError;

	private final AtomicInteger outstanding = new AtomicInteger();

	private final Set<ClaimedIntent> unstarted = ConcurrentHashMap.newKeySet();

	private final LinkedBlockingQueue<Completion> completions = new LinkedBlockingQueue<>();

	private final Object signal = new Object();

	private boolean woken;

	private volatile boolean running;

	private volatile boolean stopping;

	private ThreadPoolExecutor pool;

	private Thread claimThread;

	private Thread completionThread;

	EffectDrainer(IntentStore store, EffectDispatcher dispatcher, Consumer<List<Settled>> settledListener,
			Settings settings, DuctorObserver observer) {
		this.observer = observer;
		this.store = store;
		this.dispatcher = dispatcher;
		this.settledListener = settledListener;
		this.settings = settings;
		this.owner = ManagementFactory.getRuntimeMXBean().getName() + "/" + UUID.randomUUID().toString().substring(0, 8);
	}

	/** @return the lease owner this drainer claims under */
	public String owner() {
		return this.owner;
	}

	/** Claim at once instead of waiting for the next poll. */
	public void wakeUp() {
		synchronized (this.signal) {
			this.woken = true;
			this.signal.notifyAll();
		}
	}

	@Override
	public synchronized void start() {
		if (this.running) {
			return;
		}
		this.running = true;
		this.stopping = false;
		this.startedAt = Instant.now();
		this.pool = new ThreadPoolExecutor(this.settings.concurrency(), this.settings.concurrency(), 0,
				TimeUnit.MILLISECONDS, new LinkedBlockingQueue<>(), new CustomizableThreadFactory("ductor-effect-"));
		this.claimThread = daemon("ductor-drainer", this::claimLoop);
		this.completionThread = daemon("ductor-completer", this::completionLoop);
		this.completionThread.start();
		this.claimThread.start();
	}

	@Override
	public synchronized void stop() {
		if (!this.running) {
			return;
		}
		this.stopping = true;
		wakeUp();
		// a claim is one short statement; a claim thread still busy is stuck waiting for a connection
		joinOrInterrupt(this.claimThread, CLAIM_STOP_TIMEOUT);
		this.pool.shutdown();
		try {
			if (!this.pool.awaitTermination(this.settings.shutdownTimeout().toMillis(), TimeUnit.MILLISECONDS)) {
				logger.warn("Ductor's drainer stopped with effects still running after "
						+ this.settings.shutdownTimeout() + "; their leases expire and the reconciler redrives them");
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		this.running = false;
		joinOrInterrupt(this.completionThread, this.settings.shutdownTimeout());
		List<ClaimedIntent> handBack = new ArrayList<>(this.unstarted);
		if (!handBack.isEmpty()) {
			try {
				int returned = this.store.handBack(this.owner, handBack);
				logger.info("Ductor's drainer handed back " + returned + " claimed intent(s) it had not started");
			}
			catch (RuntimeException ex) {
				logger.warn("Ductor's drainer could not hand back " + handBack.size()
						+ " claimed intent(s); the reconciler redrives them when their leases expire", ex);
			}
		}
	}

	@Override
	public boolean isRunning() {
		return this.running;
	}

	@Override
	public int getPhase() {
		return PeriodicWorker.PHASE;
	}

	/** Room for the running effects and two batches: one queued while the next is claimed. */
	private int capacity() {
		return this.settings.concurrency() + 2 * this.settings.batchSize();
	}

	/** Claim a full batch, or whatever is due when nothing is outstanding: never a trickle of tiny claims. */
	private boolean roomForBatch() {
		int outstanding = this.outstanding.get();
		return outstanding == 0 || capacity() - outstanding >= this.settings.batchSize();
	}

	private void claimLoop() {
		long heartbeatNanos = this.settings.lease().toNanos() / 3;
		long lastHeartbeat = System.nanoTime();
		while (!this.stopping) {
			boolean more = false;
			boolean partial = false;
			try {
				if (roomForBatch()) {
					int limit = this.settings.batchSize();
					List<ClaimedIntent> claimed = this.store.claim(this.owner, this.settings.lease(), limit);
					claimed.forEach(this::submit);
					more = claimed.size() == limit;
					partial = !more && !claimed.isEmpty();
				}
				if (System.nanoTime() - lastHeartbeat >= heartbeatNanos && this.outstanding.get() > 0) {
					this.store.extendLeases(this.owner, this.settings.lease());
					lastHeartbeat = System.nanoTime();
				}
				roundEnded(null);
			}
			catch (RuntimeException ex) {
				logger.warn("Ductor's drainer could not claim intents; retrying in " + this.settings.pollInterval(), ex);
				roundEnded(ex);
				more = false;
			}
			if (partial) {
				// under a trickle, let commits gather for a moment rather than claim them one at a time
				LockSupport.parkNanos(CLAIM_GATHER_NANOS);
			}
			if (!more || !roomForBatch()) {
				long poll = this.settings.pollInterval().toNanos();
				awaitSignal((this.outstanding.get() > 0) ? Math.min(poll, heartbeatNanos) : poll);
			}
		}
	}

	private void roundEnded(RuntimeException failure) {
		this.rounds.incrementAndGet();
		if (failure == null) {
			this.lastCompletedAt = Instant.now();
		}
		else {
			this.lastFailedAt = Instant.now();
			this.lastError = String.valueOf(failure.getMessage());
		}
		this.observer.workerRound("drainer", failure == null);
	}

	/** @return what the drainer has been doing: a round is one claim attempt */
	public WorkerStatus status() {
		return new WorkerStatus("drainer", this.running, this.settings.pollInterval(), this.startedAt,
				this.rounds.get(), this.lastCompletedAt, this.lastFailedAt, this.lastError);
	}

	private void submit(ClaimedIntent intent) {
		this.outstanding.incrementAndGet();
		this.unstarted.add(intent);
		this.pool.execute(() -> {
			if (this.stopping || !this.unstarted.remove(intent)) {
				return;
			}
			Completion completion;
			try {
				completion = this.dispatcher.dispatch(intent);
			}
			catch (RuntimeException ex) {
				// the registry or bean lookup failed: retry later rather than lose the intent
				completion = new Completion(intent.id(), intent.attempt(), EffectStatus.PENDING,
						"Dispatch failed before the effect ran: " + ex, this.settings.pollInterval());
			}
			this.completions.add(completion);
		});
	}

	private void completionLoop() {
		List<Completion> batch = new ArrayList<>();
		while (this.running || !this.completions.isEmpty() || !batch.isEmpty()) {
			try {
				if (batch.isEmpty()) {
					Completion first = this.completions.poll(50, TimeUnit.MILLISECONDS);
					if (first == null) {
						continue;
					}
					batch.add(first);
					this.completions.drainTo(batch, MAX_COMPLETION_BATCH - 1);
				}
				List<Settled> settled = this.store.complete(this.owner, batch);
				if (settled.size() < batch.size()) {
					logger.info((batch.size() - settled.size()) + " effect outcome(s) arrived after their lease "
							+ "was lost and were ignored; a newer attempt owns those intents");
				}
				this.outstanding.addAndGet(-batch.size());
				batch.clear();
				wakeUp();
				this.settledListener.accept(settled);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				return;
			}
			catch (RuntimeException ex) {
				if (!this.running) {
					logger.warn("Ductor's drainer stopped before it could record " + batch.size() + " effect outcome(s); "
							+ "their leases expire and the reconciler redrives them", ex);
					return;
				}
				// keep the batch and try again: an outcome is never dropped while the drainer runs
				logger.warn("Ductor's drainer could not record " + batch.size() + " effect outcome(s); retrying", ex);
				sleep(this.settings.pollInterval());
			}
		}
	}

	private void awaitSignal(long nanos) {
		synchronized (this.signal) {
			if (!this.woken && !this.stopping) {
				try {
					TimeUnit.NANOSECONDS.timedWait(this.signal, nanos);
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
					this.stopping = true;
				}
			}
			this.woken = false;
		}
	}

	private static Thread daemon(String name, Runnable body) {
		Thread thread = new Thread(body, name);
		thread.setDaemon(true);
		return thread;
	}

	private static void sleep(Duration duration) {
		try {
			Thread.sleep(duration.toMillis());
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	private static void joinOrInterrupt(Thread thread, Duration timeout) {
		try {
			thread.join(timeout.toMillis());
			if (thread.isAlive()) {
				thread.interrupt();
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	/**
	 * How a drainer works.
	 *
	 * @param batchSize the most intents one claim takes
	 * @param concurrency how many effects run at once
	 * @param pollInterval how often it looks for due intents without being woken
	 * @param lease how long a claim lasts without a heartbeat
	 * @param shutdownTimeout how long stopping waits for running effects
	 */
	public record Settings(int batchSize, int concurrency, Duration pollInterval, Duration lease,
			Duration shutdownTimeout) {
	}

}
