package io.ductor.effect.internal;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import io.ductor.effect.internal.ClaimPlan.ClaimedBatch;
import io.ductor.effect.internal.EffectDrainer.Settings;
import io.ductor.effect.internal.IntentClaims.ClaimedIntent;
import io.ductor.effect.internal.IntentOutcomes.Completion;
import io.ductor.metrics.internal.DuctorObserver;
import io.ductor.worker.internal.DuctorThreads;
import io.ductor.worker.internal.DuctorThreads.Deadline;

/**
 * One run of a drainer, from a start to the stop that follows it, under a lease owner of
 * its own. Everything a run needs (its threads, the claims it holds, its outstanding
 * count, its queue of outcomes) lives here and dies with it, so a drainer started again
 * begins from nothing, and an attempt the last run left behind can never be mistaken for
 * one of the new run's claims.
 * <p>
 * Two threads, a pool and a beat, all from {@link DuctorThreads}: the claim thread claims
 * batches and hands them to the pool, and waits on its {@link Waiter} between claims; the
 * pool runs the effects (on virtual threads when they are on, never more than the
 * concurrency at once); the {@link CompletionBatcher}'s thread records outcomes in
 * batches; and the {@link LeaseHeartbeat} extends the leases of the claims held, on
 * Ductor's scheduler (a third of the lease), whatever the claims are doing; a claim it
 * finds lost is held no more.
 */
public final class DrainSession {

	private static final Log logger = LogFactory.getLog(DrainSession.class);

	private static final long CLAIM_GATHER_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

	private static final Duration CLAIM_STOP_TIMEOUT = Duration.ofSeconds(2);

	/**
	 * The share of the shutdown deadline kept, after the running effects, for recording
	 * the outcomes of those that finished: at most this long.
	 */
	private static final Duration OUTCOME_SHARE = Duration.ofSeconds(1);

	private final String owner;

	private final ClaimPlan claims;

	private final IntentOutcomes outcomes;

	private final EffectDispatcher dispatcher;

	private final Consumer<RuntimeException> roundListener;

	private final Settings settings;

	private final DuctorObserver observer;

	private final AtomicInteger outstanding = new AtomicInteger();

	/**
	 * The claims held, by intent id, from the claim (or the hand-over at commit) until
	 * their outcome is recorded, they are released, or the heartbeat finds their lease
	 * lost: the attempts whose leases the heartbeat extends, and nothing else.
	 */
	private final Map<Long, DrainClaim> held = new ConcurrentHashMap<>();

	/** Claims handed to the pool that no worker has taken yet; handed back at stop. */
	private final Set<DrainClaim> unstarted = ConcurrentHashMap.newKeySet();

	private final Waiter waiter = new Waiter();

	private volatile boolean stopping;

	/**
	 * Set at the shutdown deadline, before the effects still running are interrupted:
	 * their outcomes are not recorded (an interrupted attempt's outcome says nothing
	 * about its receiver); their leases expire and the reconciler takes them over, as
	 * after a crash.
	 */
	private volatile boolean cutOff;

	/**
	 * Whether intents of effects without a concurrency limit may be due: set by
	 * {@link #wakeUp()}, cleared by a claim that found fewer than it asked for.
	 */
	private volatile boolean othersDue = true;

	/** When the claim thread last asked for them ({@link System#nanoTime()}). */
	private long othersAskedAt = System.nanoTime();

	/**
	 * Whether the claim thread waits for room: it found none, or filled its last batch.
	 * Only then does a freed place wake it when no effect has a concurrency limit: an
	 * outcome recorded makes nothing due, except what
	 * {@link DrainClaim#mayReleaseOthers()} names.
	 */
	private volatile boolean awaitingRoom;

	/** Whether some effect has a concurrency limit: a freed slot may make it due. */
	private final boolean limited;

	private final ThreadPoolExecutor pool;

	private final LeaseHeartbeat heartbeat;

	private final CompletionBatcher completions;

	private final Thread claimThread;

	private final Handoffs handoffs = new Handoffs();

	private final DuctorThreads threads;

	DrainSession(String owner, Stores stores, EffectDispatcher dispatcher, Consumer<List<Settled>> settledListener,
			Consumer<RuntimeException> roundListener, Settings settings, DuctorObserver observer,
			DuctorThreads threads) {
		this.owner = owner;
		this.claims = new ClaimPlan(stores.claims(), stores.slots());
		this.limited = !stores.slots().limits().isEmpty();
		this.outcomes = stores.outcomes();
		this.dispatcher = dispatcher;
		this.roundListener = roundListener;
		this.settings = settings;
		this.observer = observer;
		this.threads = threads;
		this.pool = threads.effectWorkers(settings.concurrency());
		this.heartbeat = new LeaseHeartbeat(owner, stores.leases(), settings.lease(), observer, this.held,
				threads.scheduler());
		this.completions = new CompletionBatcher(owner, stores.outcomes(), settings.pollInterval(), this::recorded,
				settledListener, threads);
		this.claimThread = threads.newThread("drainer", this::claimLoop);
	}

	String owner() {
		return this.owner;
	}

	void start() {
		this.heartbeat.start();
		this.completions.start();
		this.claimThread.start();
	}

	/**
	 * Stop claiming, let running effects finish (their leases still extended), record
	 * their outcomes and hand back what was claimed but never started, all within
	 * Ductor's shutdown deadline: effects still running near it are interrupted, keeping
	 * a share of it (a tenth, at most a second) for recording outcomes.
	 */
	void stop() {
		Deadline deadline = this.threads.stopDeadline();
		this.stopping = true;
		wakeUp();
		// a claim is one short statement; a claim thread still busy is stuck waiting for
		// a connection
		deadline.within(CLAIM_STOP_TIMEOUT).joinOrInterrupt(this.claimThread);
		this.pool.shutdown();
		Duration share = this.threads.shutdownTimeout().dividedBy(10);
		if (!awaitEffects(deadline.earlier((share.compareTo(OUTCOME_SHARE) < 0) ? share : OUTCOME_SHARE))) {
			logger.warn("Ductor's drainer stopped with effects still running at the shutdown deadline ("
					+ this.threads.shutdownTimeout() + "); they were interrupted, their leases expire and the "
					+ "reconciler redrives them");
		}
		this.completions.stop(deadline);
		this.heartbeat.stop();
		List<ClaimedIntent> handBack = this.unstarted.stream().map(DrainClaim::intent).toList();
		if (!handBack.isEmpty()) {
			try {
				int returned = this.outcomes.handBack(this.owner, handBack);
				logger.info("Ductor's drainer handed back " + returned + " claimed intent(s) it had not started");
			}
			catch (RuntimeException ex) {
				logger.warn("Ductor's drainer could not hand back " + handBack.size()
						+ " claimed intent(s); the reconciler redrives them when their leases expire", ex);
			}
		}
	}

	/**
	 * Waits for the running effects until {@code deadline}, then cuts them off and
	 * interrupts them.
	 * @return whether they all finished in time
	 */
	private boolean awaitEffects(Deadline deadline) {
		try {
			if (this.pool.awaitTermination(deadline.remaining().toNanos(), TimeUnit.NANOSECONDS)) {
				return true;
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		this.cutOff = true;
		this.pool.shutdownNow();
		return false;
	}

	/**
	 * Claim at once: something may have become due (a commit, a notification, intents
	 * back to pending), of any effect.
	 */
	void wakeUp() {
		this.othersDue = true;
		this.waiter.wake();
	}

	/**
	 * Claim at once if the claim thread waits for room, or when a slot freed: this run
	 * has room again (an outcome recorded, a place given back), but nothing new need be
	 * due.
	 */
	private void roomFreed() {
		if (this.awaitingRoom || this.limited) {
			this.waiter.wake();
		}
	}

	/**
	 * Room for the running effects and two batches: one queued while the next is claimed.
	 */
	private int capacity() {
		return this.settings.concurrency() + 2 * this.settings.batchSize();
	}

	/**
	 * Claim a full batch, or whatever is due when nothing is outstanding: never a trickle
	 * of tiny claims.
	 */
	private boolean roomForBatch() {
		int outstanding = this.outstanding.get();
		return outstanding == 0 || capacity() - outstanding >= this.settings.batchSize();
	}

	private void claimLoop() {
		while (!this.stopping) {
			boolean more = false;
			boolean partial = false;
			boolean room = roomForBatch();
			try {
				if (room) {
					int limit = this.settings.batchSize();
					List<ClaimedIntent> claimed = claim(limit);
					claimed.forEach(this::submit);
					more = claimed.size() == limit;
					partial = !more && !claimed.isEmpty();
				}
				this.roundListener.accept(null);
			}
			catch (RuntimeException ex) {
				logger.warn("Ductor's drainer could not claim intents; retrying in " + this.settings.pollInterval(),
						ex);
				this.roundListener.accept(ex);
				more = false;
			}
			if (partial) {
				// under a trickle, let commits gather for a moment rather than claim them
				// one at a time
				LockSupport.parkNanos(CLAIM_GATHER_NANOS);
			}
			if (!more || !roomForBatch()) {
				awaitSignal(!room || more);
			}
		}
	}

	/**
	 * One claim. The intents of the effects without a concurrency limit are asked for
	 * when some may be due: after a wake-up of {@link #wakeUp()}'s kind, a poll interval
	 * after they were last asked for, or when they filled their room last time; not for
	 * every slot that frees, since finding them reads past the whole backlog of the
	 * limited effects.
	 */
	private List<ClaimedIntent> claim(int limit) {
		long now = System.nanoTime();
		boolean others = this.othersDue || now - this.othersAskedAt >= this.settings.pollInterval().toNanos();
		// a wake-up during the claim asks again
		this.othersDue = false;
		ClaimedBatch batch;
		try {
			batch = this.claims.claim(this.owner, this.settings.lease(), limit, others);
		}
		catch (RuntimeException ex) {
			this.othersDue |= others;
			throw ex;
		}
		if (batch.othersAsked()) {
			this.othersAskedAt = now;
			this.othersDue |= batch.othersLeft();
		}
		else {
			this.othersDue |= others;
		}
		return batch.intents();
	}

	/**
	 * Waits for a wake-up or the next poll, and for room when {@code forRoom}; an
	 * interrupted claim thread stops claiming.
	 */
	private void awaitSignal(boolean forRoom) {
		this.awaitingRoom = forRoom;
		try {
			// a place freed before the flag was set woke nobody: look again
			if (forRoom && roomForBatch()) {
				return;
			}
			if (!this.waiter.await(this.settings.pollInterval().toNanos(), () -> this.stopping)) {
				this.stopping = true;
			}
		}
		finally {
			this.awaitingRoom = false;
		}
	}

	/**
	 * A place in this run for one intent that a local transaction records already leased
	 * to it, or {@code null} when the run holds as many intents as it would claim (or is
	 * stopping): the intent is then recorded pending, for any instance to claim.
	 */
	Handoff reserve() {
		while (!this.stopping) {
			int current = this.outstanding.get();
			if (current >= capacity()) {
				return null;
			}
			if (this.outstanding.compareAndSet(current, current + 1)) {
				return new Handoff(this.handoffs);
			}
		}
		return null;
	}

	private void submit(ClaimedIntent intent) {
		this.outstanding.incrementAndGet();
		enqueue(intent, false);
	}

	/**
	 * Runs an intent recorded leased to this run, once the transaction that recorded it
	 * committed.
	 */
	private void handOver(ClaimedIntent intent) {
		if (this.stopping) {
			// handed back like the claims no worker started (left leased, it would wait
			// for
			// its lease to expire and the redrive would count an attempt that never ran);
			// on a thread of its own: this one's connection still belongs to the finished
			// transaction, and the pool is shut down
			this.outstanding.decrementAndGet();
			List<ClaimedIntent> intents = List.of(intent);
			this.threads.newThread("drainer-hand-back", () -> {
				try {
					this.outcomes.handBack(this.owner, intents);
				}
				catch (RuntimeException ex) {
					logger.warn("Ductor's drainer could not hand back intent " + intent.id() + ", committed while it "
							+ "stopped; the reconciler redrives it when its lease expires", ex);
				}
			}).start();
			return;
		}
		enqueue(intent, true);
	}

	/**
	 * Returns intents recorded leased to this run whose transaction committed after
	 * rolling back to a savepoint, or whose commit reported an error: which of them exist
	 * is unknown here, so none runs here; the ones that do go back to pending for the
	 * next claim. On a pool thread: the committing thread's connection still belongs to
	 * the finished transaction.
	 */
	private void handBackUncertain(List<ClaimedIntent> intents) {
		this.outstanding.addAndGet(-intents.size());
		Runnable handBack = () -> {
			try {
				this.outcomes.handBack(this.owner, intents);
			}
			catch (RuntimeException ex) {
				logger.warn("Ductor's drainer could not return " + intents.size() + " intent(s) recorded in a "
						+ "transaction that rolled back to a savepoint or whose commit reported an error; the "
						+ "reconciler redrives them when their leases expire", ex);
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

	private void enqueue(ClaimedIntent intent, boolean recordedLeased) {
		DrainClaim claim = new DrainClaim(intent, recordedLeased);
		this.unstarted.add(claim);
		DrainClaim previous = this.held.put(intent.id(), claim);
		if (previous != null && this.unstarted.remove(previous)) {
			// our earlier claim of this intent lost its lease before it started, and we
			// claimed it again
			release(previous);
		}
		try {
			this.pool.execute(() -> run(claim));
		}
		catch (RejectedExecutionException ex) {
			// stopping: the claim stays unstarted and is handed back
		}
	}

	private void run(DrainClaim claim) {
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
			if (completion != null && !this.cutOff) {
				this.completions.add(claim, completion);
			}
			else {
				release(claim);
			}
		}
	}

	private boolean markStarted(ClaimedIntent intent) {
		if (this.outcomes.markStarted(this.owner, intent.id(), intent.attempt())) {
			return true;
		}
		DrainClaim claim = this.held.get(intent.id());
		if (claim != null && claim.intent() == intent && !claim.lost) {
			claim.lost = true;
			this.observer.drainerLeaseLost(1);
		}
		logger.warn("Ductor's drainer lost the lease of intent " + intent.id() + " of effect '" + intent.effectName()
				+ "' (attempt " + intent.attempt() + ") before it started; its receiver was not called");
		return false;
	}

	/** Forget a claim whose outcome will never be recorded by this run. */
	private void release(DrainClaim claim) {
		this.held.remove(claim.intent().id(), claim);
		this.outstanding.decrementAndGet();
		roomFreed();
	}

	/**
	 * The outcomes of these claims were recorded (applied, or fenced off): they are held
	 * no more.
	 */
	private void recorded(List<DrainClaim> claims) {
		boolean releasesOthers = false;
		for (DrainClaim claim : claims) {
			this.held.remove(claim.id(), claim);
			releasesOthers |= claim.mayReleaseOthers();
		}
		this.outstanding.addAndGet(-claims.size());
		if (releasesOthers) {
			// the next intent of an ordering key, or a compensation, may be due now
			this.waiter.wake();
		}
		else {
			roomFreed();
		}
	}

	/** Where the places this run reserves for intents recorded leased to it go. */
	private final class Handoffs implements Handoff.Target {

		@Override
		public String owner() {
			return DrainSession.this.owner;
		}

		@Override
		public Duration lease() {
			return DrainSession.this.settings.lease();
		}

		@Override
		public void handOver(ClaimedIntent intent) {
			DrainSession.this.handOver(intent);
		}

		@Override
		public void release() {
			DrainSession.this.outstanding.decrementAndGet();
			roomFreed();
		}

		@Override
		public void handBack(List<ClaimedIntent> intents) {
			handBackUncertain(intents);
		}

	}

	/**
	 * Where a drain session's statements live.
	 *
	 * @param claims the claim of due intents
	 * @param slots the concurrency limits the claims respect
	 * @param outcomes the outcomes, started marks and hand-backs of attempts
	 * @param leases the heartbeat's extension of leases
	 */
	public record Stores(IntentClaims claims, EffectSlots slots, IntentOutcomes outcomes, DrainerLeases leases) {
	}

}
