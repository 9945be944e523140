package io.ductor.effect.internal;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import io.ductor.metrics.internal.DuctorObserver;
import io.ductor.worker.internal.WorkerRounds;

/**
 * The heartbeat of a drain session: on a thread of its own, every third of the lease
 * whatever the claims are doing, it extends the lease of every claim held, from the
 * database clock, and reports the claims whose lease was lost meanwhile (it expired and
 * was redriven, or another drainer holds the intent now). Their attempts may still be
 * running; their outcomes will be fenced off.
 */
public final class LeaseHeartbeat {

	private static final Log logger = LogFactory.getLog(EffectDrainer.class);

	private static final int MAX_IDS_LOGGED = 10;

	private final String owner;

	private final IntentStore store;

	private final Duration lease;

	private final DuctorObserver observer;

	private final WorkerRounds rounds;

	/** The claims held by the session, by intent id. */
	private final Map<Long, DrainClaim> held;

	private final ScheduledExecutorService executor;

	LeaseHeartbeat(String owner, IntentStore store, Duration lease, DuctorObserver observer,
			Map<Long, DrainClaim> held) {
		this.owner = owner;
		this.store = store;
		this.lease = lease;
		this.observer = observer;
		this.rounds = new WorkerRounds("heartbeat", observer);
		this.held = held;
		this.executor = Executors.newSingleThreadScheduledExecutor((task) -> {
			Thread thread = new Thread(task, "ductor-heartbeat");
			thread.setDaemon(true);
			return thread;
		});
	}

	void start() {
		long beat = Math.max(1, this.lease.toMillis() / 3);
		this.executor.scheduleWithFixedDelay(this::beatSafely, beat, beat, TimeUnit.MILLISECONDS);
	}

	void stop() {
		this.executor.shutdownNow();
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

	/** One beat: extends the leases of the claims held and reports the ones lost. */
	void beat() {
		if (this.held.isEmpty()) {
			return;
		}
		List<DrainClaim> claims = new ArrayList<>(this.held.values());
		Set<Long> extended;
		try {
			extended = this.store.extendLeases(this.owner, this.lease);
		}
		catch (RuntimeException ex) {
			logger.warn("Ductor's drainer could not extend the leases of " + claims.size() + " claimed intent(s); "
					+ "trying again in a third of the lease. If this lasts as long as the lease (" + this.lease
					+ "), the reconciler redrives them while they may still run", ex);
			this.rounds.failed(ex);
			return;
		}
		this.rounds.succeeded();
		List<DrainClaim> notExtended = new ArrayList<>();
		for (DrainClaim claim : claims) {
			long id = claim.id();
			// a claim settling or settled may have been completed before the update read
			// it
			if (!extended.contains(id) && !claim.settling && !claim.lost && this.held.get(id) == claim) {
				notExtended.add(claim);
			}
		}
		if (!notExtended.isEmpty()) {
			reportLost(notExtended);
		}
	}

	/**
	 * Counts and logs the claims among {@code notExtended} that the session no longer
	 * holds.
	 */
	private void reportLost(List<DrainClaim> notExtended) {
		Set<Long> stillHeld;
		try {
			stillHeld = this.store.heldBy(this.owner, notExtended.stream().map(DrainClaim::id).toList());
		}
		catch (RuntimeException ex) {
			logger.debug("Ductor's drainer could not check the leases its heartbeat did not extend", ex);
			return;
		}
		List<Long> lost = new ArrayList<>();
		for (DrainClaim claim : notExtended) {
			long id = claim.id();
			if (!stillHeld.contains(id) && !claim.settling && !claim.lost) {
				claim.lost = true;
				lost.add(id);
			}
		}
		if (!lost.isEmpty()) {
			this.observer.drainerLeaseLost(lost.size());
			logger.warn("Ductor's drainer lost the lease of " + lost.size() + " intent(s) it holds "
					+ lost.subList(0, Math.min(lost.size(), MAX_IDS_LOGGED))
					+ ((lost.size() > MAX_IDS_LOGGED) ? "…" : "")
					+ ": the lease expired and the intent was redriven, or another drainer holds it; the outcome of "
					+ "the attempt this drainer runs will be ignored");
		}
	}

}
