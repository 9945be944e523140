package io.ductor.effect.internal;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

import org.springframework.context.SmartLifecycle;

import io.ductor.metrics.internal.DuctorObserver;
import io.ductor.worker.internal.DuctorThreads;
import io.ductor.worker.internal.PeriodicWorker;
import io.ductor.worker.internal.WorkerRounds;
import io.ductor.worker.internal.WorkerStatus;

/**
 * Drains the outbox. A claim thread claims due intents in batches (one short statement
 * each), hands them to a bounded pool that runs the effects outside any transaction, and
 * a completion thread records their outcomes in batches with updates fenced by lease
 * owner and attempt.
 * <p>
 * It wakes when a local transaction that recorded an intent commits, when
 * {@link #wakeUp()} is called (for example on a PostgreSQL notification from another
 * instance), and every poll interval as a fallback. A heartbeat of its own extends the
 * leases of the claims held every third of the lease, from the database clock, whether
 * claims succeed or not, and only while they are live: an expired lease is lost for good.
 * Before a receiver that cannot deduplicate is called, the attempt is durably marked
 * started, so the reconciler parks only attempts that may have reached their receiver.
 * Stopping it stops claiming, lets running effects finish within Ductor's shutdown
 * deadline ({@link DuctorThreads}) and hands claimed-but-unstarted intents back.
 * <p>
 * Each start runs a fresh {@link DrainSession} under a lease owner of its own (the
 * instance id and the start's generation): nothing a stop leaves behind reaches the next
 * start.
 */
public class EffectDrainer implements SmartLifecycle {

	private final DrainSession.Stores stores;

	private final EffectDispatcher dispatcher;

	private final Consumer<List<Settled>> settledListener;

	private final Settings settings;

	private final DuctorObserver observer;

	private final LocalDrainer local;

	private final AtomicLong generation = new AtomicLong();

	private final WorkerRounds rounds;

	private final DuctorThreads threads;

	private volatile String owner;

	private volatile DrainSession session;

	/**
	 * @param stores the statements it claims, completes and extends leases with
	 * @param dispatcher runs the effects
	 * @param settledListener told about the intents it settles
	 * @param local registers it while it runs, and names its instance
	 * @param settings how it works
	 * @param observer what is told about its rounds and attempts
	 * @param threads where its threads come from
	 */
	public EffectDrainer(DrainSession.Stores stores, EffectDispatcher dispatcher,
			Consumer<List<Settled>> settledListener, LocalDrainer local, Settings settings, DuctorObserver observer,
			DuctorThreads threads) {
		this.observer = observer;
		this.threads = threads;
		this.stores = stores;
		this.dispatcher = dispatcher;
		this.settledListener = settledListener;
		this.settings = settings;
		this.rounds = new WorkerRounds("drainer", observer);
		this.local = local;
	}

	/**
	 * @return what identifies this drainer's instance for as long as it lives (it signs
	 * the notifications its commits send)
	 */
	public String instanceId() {
		return this.local.instanceId();
	}

	/**
	 * @return the lease owner this drainer claims under since its last start: its
	 * instance id and the start's generation; {@code null} before the first start
	 */
	public String owner() {
		return this.owner;
	}

	/** Claim at once instead of waiting for the next poll. */
	public void wakeUp() {
		DrainSession session = this.session;
		if (session != null) {
			session.wakeUp();
		}
	}

	/**
	 * A place in the running drainer for an intent that a transaction of this instance
	 * records already leased to it, so that the commit hands it straight to a worker.
	 * @return the reservation, or {@code null} when the drainer does not run or holds as
	 * many intents as it would claim
	 */
	Handoff reserve() {
		DrainSession session = this.session;
		return (session != null) ? session.reserve() : null;
	}

	@Override
	public synchronized void start() {
		if (this.session != null) {
			return;
		}
		String owner = this.local.instanceId() + "/" + this.generation.incrementAndGet();
		DrainSession session = new DrainSession(owner, this.stores, this.dispatcher, this.settledListener,
				this::roundEnded, this.settings, this.observer, this.threads);
		this.owner = owner;
		this.rounds.started();
		this.session = session;
		session.start();
		this.local.started(this);
	}

	@Override
	public synchronized void stop() {
		DrainSession session = this.session;
		if (session == null) {
			return;
		}
		this.local.stopped(this);
		try {
			session.stop();
		}
		finally {
			this.session = null;
		}
	}

	@Override
	public boolean isRunning() {
		return this.session != null;
	}

	@Override
	public int getPhase() {
		return PeriodicWorker.PHASE;
	}

	private void roundEnded(RuntimeException failure) {
		if (failure == null) {
			this.rounds.succeeded();
		}
		else {
			this.rounds.failed(failure);
		}
	}

	/**
	 * @return what the drainer has been doing: a round is one claim attempt
	 */
	public WorkerStatus status() {
		return this.rounds.status(isRunning(), this.settings.pollInterval());
	}

	/**
	 * How a drainer works.
	 *
	 * @param batchSize the most intents one claim takes
	 * @param concurrency how many effects run at once
	 * @param pollInterval how often it looks for due intents without being woken
	 * @param lease how long a claim lasts without a heartbeat
	 */
	public record Settings(int batchSize, int concurrency, Duration pollInterval, Duration lease) {
	}

}
