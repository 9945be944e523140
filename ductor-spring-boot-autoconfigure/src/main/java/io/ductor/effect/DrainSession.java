package io.ductor.effect;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.scheduling.concurrent.CustomizableThreadFactory;

import io.ductor.effect.EffectDrainer.Settings;
import io.ductor.effect.IntentStore.ClaimedIntent;
import io.ductor.effect.IntentStore.Completion;
import io.ductor.effect.IntentStore.Settled;
import io.ductor.metrics.DuctorObserver;

/**
 * One run of a drainer, from a start to the stop that follows it, under a lease owner of its own.
 * Everything a run needs (its threads, the claims it holds, its outstanding count, its queue of
 * outcomes) lives here and dies with it, so a drainer started again begins from nothing, and an
 * attempt the last run left behind can never be mistaken for one of the new run's claims.
 * <p>
 * Three threads and a pool: the claim thread claims batches and hands them to the pool; the pool
 * runs the effects; the completion thread records outcomes in batches; and the heartbeat extends
 * the leases of every claim held, on a schedule of its own (a third of the lease), whatever the
 * claims are doing.
 */
final class DrainSession {

	private static final Log logger = LogFactory.getLog(EffectDrainer.class);

	private static final int MAX_COMPLETION_BATCH = 1000;

	private static final long CLAIM_GATHER_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

	private static final Duration CLAIM_STOP_TIMEOUT = Duration.ofSeconds(2);

	private static final int MAX_IDS_LOGGED = 10;

	private final String owner;

	private final IntentStore store;

	private final EffectDispatcher dispatcher;

	private final Consumer<List<Settled>> settledListener;

	private final Consumer<RuntimeException> roundListener;

	private final Settings settings;

	private final DuctorObserver observer;

	private final AtomicInteger outstanding = new AtomicInteger();

	/** The claims held, by intent id, from the claim until their outcome is recorded. */
	private final Map<Long, Claim> held = new ConcurrentHashMap<>();

	/** Claims handed to the pool that no worker has taken yet; handed back at stop. */
	private final Set<Claim> unstarted = ConcurrentHashMap.newKeySet();

	private final LinkedBlockingQueue<Outcome> completions = new LinkedBlockingQueue<>();

	private final Object signal = new Object();

	private boolean woken;

	private volatile boolean stopping;

	private volatile boolean recording = true;

	private final ThreadPoolExecutor pool;

	private final ScheduledExecutorService heartbeat;

	private final Thread claimThread;

	private final Thread completionThread;

	DrainSession(String owner, IntentStore store, EffectDispatcher dispatcher, Consumer<List<Settled>> settledListener,
			Consumer<RuntimeException> roundListener, Settings settings, DuctorObserver observer) {
		this.owner = owner;
		this.store = store;
		this.dispatcher = dispatcher;
		this.settledListener = settledListener;
		this.roundListener = roundListener;
		this.settings = settings;
		this.observer = observer;
		this.pool = new ThreadPoolExecutor(settings.concurrency(), settings.concurrency(), 0, TimeUnit.MILLISECONDS,
				new LinkedBlockingQueue<>(), new CustomizableThreadFactory("ductor-effect-"));
		this.heartbeat = Executors.newSingleThreadScheduledExecutor((task) -> daemon("ductor-heartbeat", task));
		this.claimThread = daemon("ductor-drainer", this::claimLoop);
		this.completionThread = daemon("ductor-completer", this::completionLoop);
	}

	String owner() {
		return this.owner;
	}

	void start() {
		long beat = Math.max(1, this.settings.lease().toMillis() / 3);
		this.heartbeat.scheduleWithFixedDelay(this::beatSafely, beat, beat, TimeUnit.MILLISECONDS);
		this.completionThread.start();
		this.claimThread.start();
	}

	/**
	 * Stop claiming, let running effects finish within the shutdown timeout (their leases still
	 * extended), record their outcomes and hand back what was claimed but never started.
	 */
	void stop() {
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
		this.recording = false;
		joinOrInterrupt(this.completionThread, this.settings.shutdownTimeout());
		this.heartbeat.shutdownNow();
		List<ClaimedIntent> handBack = this.unstarted.stream().map(Claim::intent).toList();
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

	void wakeUp() {
		synchronized (this.signal) {
			this.woken = true;
			this.signal.notifyAll();
		}
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
				this.roundListener.accept(null);
			}
			catch (RuntimeException ex) {
				logger.warn("Ductor's drainer could not claim intents; retrying in " + this.settings.pollInterval(), ex);
				this.roundListener.accept(ex);
				more = false;
			}
			if (partial) {
				// under a trickle, let commits gather for a moment rather than claim them one at a time
				LockSupport.parkNanos(CLAIM_GATHER_NANOS);
			}
			if (!more || !roomForBatch()) {
				awaitSignal(this.settings.pollInterval().toNanos());
			}
		}
	}

	/**
	 * A place in this run for one intent that a local transaction records already leased to it,
	 * or {@code null} when the run holds as many intents as it would claim (or is stopping): the
	 * intent is then recorded pending, for any instance to claim.
	 */
	Handoff reserve() {
		while (!this.stopping) {
			int current = this.outstanding.get();
			if (current >= capacity()) {
				return null;
			}
			if (this.outstanding.compareAndSet(current, current + 1)) {
				return new Handoff(this);
			}
		}
		return null;
	}

	private void submit(ClaimedIntent intent) {
		this.outstanding.incrementAndGet();
		enqueue(intent);
	}

	/** Runs an intent recorded leased to this run, once the transaction that recorded it committed. */
	private void handOver(ClaimedIntent intent) {
		if (this.stopping) {
			// its lease expires and the reconciler redrives it, as after a crash
			this.outstanding.decrementAndGet();
			return;
		}
		enqueue(intent);
	}

	/**
	 * Returns intents recorded leased to this run whose transaction committed after rolling back to
	 * a savepoint: which of them still exist is unknown here, so none runs here; the ones that do
	 * go back to pending for the next claim. On a pool thread: the committing thread's connection
	 * still belongs to the finished transaction.
	 */
	private void handBackAfterPartialRollback(List<ClaimedIntent> intents) {
		this.outstanding.addAndGet(-intents.size());
		Runnable handBack = () -> {
			try {
				this.store.handBack(this.owner, intents);
			}
			catch (RuntimeException ex) {
				logger.warn("Ductor's drainer could not return " + intents.size() + " intent(s) recorded in a "
						+ "transaction that rolled back to a savepoint; the reconciler redrives them when their "
						+ "leases expire", ex);
			}
			wakeUp();
		};
		try {
			this.pool.execute(handBack);
		}
		catch (RejectedExecutionException ex) {
			// stopping: the leases expire and the reconciler redrives them
		}
	}

	private void enqueue(ClaimedIntent intent) {
		Claim claim = new Claim(intent);
		this.unstarted.add(claim);
		Claim previous = this.held.put(intent.id(), claim);
		if (previous != null && this.unstarted.remove(previous)) {
			// our earlier claim of this intent lost its lease before it started, and we claimed it again
			release(previous);
		}
		try {
			this.pool.execute(() -> run(claim));
		}
		catch (RejectedExecutionException ex) {
			// stopping: the claim stays unstarted and is handed back
		}
	}

	private void run(Claim claim) {
		if (this.stopping || !this.unstarted.remove(claim)) {
			return;
		}
		Completion completion = null;
		try {
			if (this.held.get(claim.intent().id()) == claim) {
				completion = this.dispatcher.dispatch(claim.intent(), this::markStarted);
			}
		}
		finally {
			if (completion != null) {
				this.completions.add(new Outcome(claim, completion));
			}
			else {
				release(claim);
			}
		}
	}

	private boolean markStarted(ClaimedIntent intent) {
		if (this.store.markStarted(this.owner, intent.id(), intent.attempt())) {
			return true;
		}
		Claim claim = this.held.get(intent.id());
		if (claim != null && claim.intent() == intent && !claim.lost) {
			claim.lost = true;
			this.observer.drainerLeaseLost(1);
		}
		logger.warn("Ductor's drainer lost the lease of intent " + intent.id() + " of effect '" + intent.effectName()
				+ "' (attempt " + intent.attempt() + ") before it started; its receiver was not called");
		return false;
	}

	/** Forget a claim whose outcome will never be recorded by this run. */
	private void release(Claim claim) {
		this.held.remove(claim.intent().id(), claim);
		this.outstanding.decrementAndGet();
		wakeUp();
	}

	/** A scheduled task that throws is never run again: nothing may end the heartbeat. */
	private void beatSafely() {
		try {
			beat();
		}
		catch (Throwable ex) {
			logger.warn("Ductor's drainer heartbeat failed; it runs again in a third of the lease", ex);
		}
	}

	/**
	 * The heartbeat: extends the lease of every claim held and reports the claims whose lease was
	 * lost meanwhile (it expired and was redriven, or another drainer holds the intent now). Their
	 * attempts may still be running; their outcomes will be fenced off.
	 */
	private void beat() {
		if (this.held.isEmpty()) {
			return;
		}
		List<Claim> claims = new ArrayList<>(this.held.values());
		Set<Long> extended;
		try {
			extended = this.store.extendLeases(this.owner, this.settings.lease());
		}
		catch (RuntimeException ex) {
			logger.warn("Ductor's drainer could not extend the leases of " + claims.size() + " claimed intent(s); "
					+ "trying again in a third of the lease. If this lasts as long as the lease ("
					+ this.settings.lease() + "), the reconciler redrives them while they may still run", ex);
			this.observer.workerRound("heartbeat", false);
			return;
		}
		this.observer.workerRound("heartbeat", true);
		List<Claim> notExtended = new ArrayList<>();
		for (Claim claim : claims) {
			long id = claim.intent().id();
			// a claim settling or settled may have been completed before the update read it
			if (!extended.contains(id) && !claim.settling && !claim.lost && this.held.get(id) == claim) {
				notExtended.add(claim);
			}
		}
		if (!notExtended.isEmpty()) {
			reportLost(notExtended);
		}
	}

	/** Counts and logs the claims among {@code notExtended} that this run no longer holds. */
	private void reportLost(List<Claim> notExtended) {
		Set<Long> stillHeld;
		try {
			stillHeld = this.store.heldBy(this.owner, notExtended.stream().map((claim) -> claim.intent().id()).toList());
		}
		catch (RuntimeException ex) {
			logger.debug("Ductor's drainer could not check the leases its heartbeat did not extend", ex);
			return;
		}
		List<Long> lost = new ArrayList<>();
		for (Claim claim : notExtended) {
			long id = claim.intent().id();
			if (!stillHeld.contains(id) && !claim.settling && !claim.lost) {
				claim.lost = true;
				lost.add(id);
			}
		}
		if (!lost.isEmpty()) {
			this.observer.drainerLeaseLost(lost.size());
			logger.warn("Ductor's drainer lost the lease of " + lost.size() + " intent(s) it holds "
					+ lost.subList(0, Math.min(lost.size(), MAX_IDS_LOGGED)) + ((lost.size() > MAX_IDS_LOGGED) ? "…" : "")
					+ ": the lease expired and the intent was redriven, or another drainer holds it; the outcome of "
					+ "the attempt this drainer runs will be ignored");
		}
	}

	private void completionLoop() {
		List<Outcome> batch = new ArrayList<>();
		while (this.recording || !this.completions.isEmpty() || !batch.isEmpty()) {
			try {
				if (batch.isEmpty()) {
					Outcome first = this.completions.poll(50, TimeUnit.MILLISECONDS);
					if (first == null) {
						continue;
					}
					batch.add(first);
					this.completions.drainTo(batch, MAX_COMPLETION_BATCH - 1);
				}
				List<Completion> outcomes = new ArrayList<>(batch.size());
				for (Outcome outcome : batch) {
					outcome.claim().settling = true;
					outcomes.add(outcome.completion());
				}
				List<Settled> settled = this.store.complete(this.owner, outcomes);
				if (settled.size() < batch.size()) {
					logger.info((batch.size() - settled.size()) + " effect outcome(s) arrived after their lease "
							+ "was lost and were ignored; a newer attempt owns those intents");
				}
				for (Outcome outcome : batch) {
					this.held.remove(outcome.claim().intent().id(), outcome.claim());
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
				if (!this.recording) {
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
	 * One claimed attempt held by this run. Compared by identity: the same intent claimed again
	 * (after its earlier claim lost its lease) is another claim.
	 */
	private static final class Claim {

		private final ClaimedIntent intent;

		/** Its outcome is being recorded: the row may be settled before the heartbeat reads it. */
		volatile boolean settling;

		/** Its lease was found lost, and counted. */
		volatile boolean lost;

		Claim(ClaimedIntent intent) {
			this.intent = intent;
		}

		ClaimedIntent intent() {
			return this.intent;
		}

	}

	private record Outcome(Claim claim, Completion completion) {
	}

	/**
	 * One place reserved in a run for an intent recorded leased to it: handed over when the
	 * recording transaction commits, or given up when it does not.
	 */
	static final class Handoff {

		private final DrainSession session;

		private Handoff(DrainSession session) {
			this.session = session;
		}

		/** @return the lease owner to record the intent under */
		String owner() {
			return this.session.owner;
		}

		/** @return how long the recorded lease lasts, from the database clock */
		Duration lease() {
			return this.session.settings.lease();
		}

		/** The transaction committed: run the intent. */
		void handOver(ClaimedIntent intent) {
			this.session.handOver(intent);
		}

		/** The intent was not recorded leased, or its transaction did not commit. */
		void cancel() {
			this.session.outstanding.decrementAndGet();
			this.session.wakeUp();
		}

		/** The transaction committed after rolling back to a savepoint: see {@link DrainSession#handBackAfterPartialRollback}. */
		static void handBack(List<Handoff> handoffs, List<ClaimedIntent> intents) {
			Map<DrainSession, List<ClaimedIntent>> bySession = new java.util.HashMap<>();
			for (int i = 0; i < handoffs.size(); i++) {
				bySession.computeIfAbsent(handoffs.get(i).session, (session) -> new ArrayList<>()).add(intents.get(i));
			}
			bySession.forEach(DrainSession::handBackAfterPartialRollback);
		}

	}

}
