package io.ductor.effect.internal;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import io.ductor.effect.internal.DrainerLeases.LeaseBeat;
import io.ductor.metrics.internal.DuctorObserver;
import io.ductor.worker.internal.WorkerRounds;

/**
 * The heartbeat of a drain session: on Ductor's scheduler, every third of the lease
 * whatever the claims are doing, it extends the lease of every attempt the session holds,
 * in one statement, from the database clock; only while that attempt is in flight under
 * the session's owner with a lease still live. A lease found lost (it expired, even if
 * nothing redrove it yet; the intent was redriven; another drainer holds it) is counted
 * and its claim dropped from the session: it is never extended again, so an intent the
 * session no longer runs can never be kept leased, and a slot freed by an expired lease
 * never comes back to its old holder. The attempt may still be running; its outcome is
 * fenced off once the intent is redriven or claimed again.
 */
public final class LeaseHeartbeat {

	private static final Log logger = LogFactory.getLog(EffectDrainer.class);

	private static final int MAX_IDS_LOGGED = 10;

	private final String owner;

	private final DrainerLeases leases;

	private final Duration lease;

	private final DuctorObserver observer;

	private final WorkerRounds rounds;

	/** The claims held by the session, by intent id. */
	private final Map<Long, DrainClaim> held;

	/**
	 * Ductor's scheduler: shared with the periodic workers' timers, which only hand their
	 * rounds to other threads, so nothing slow ever runs ahead of a beat.
	 */
	private final ScheduledExecutorService scheduler;

	private volatile @Nullable ScheduledFuture<?> beats;

	LeaseHeartbeat(String owner, DrainerLeases leases, Duration lease, DuctorObserver observer,
			Map<Long, DrainClaim> held, ScheduledExecutorService scheduler) {
		this.owner = owner;
		this.leases = leases;
		this.lease = lease;
		this.observer = observer;
		this.rounds = new WorkerRounds("heartbeat", observer);
		this.held = held;
		this.scheduler = scheduler;
	}

	void start() {
		long beat = Math.max(1, this.lease.toMillis() / 3);
		this.beats = this.scheduler.scheduleWithFixedDelay(this::beatSafely, beat, beat, TimeUnit.MILLISECONDS);
	}

	/** No beat starts after this; one under way ends by itself (one statement). */
	void stop() {
		ScheduledFuture<?> beats = this.beats;
		if (beats != null) {
			beats.cancel(false);
		}
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
	 * One beat: extends the leases of the attempts held, and drops the ones whose lease
	 * was lost.
	 */
	void beat() {
		if (this.held.isEmpty()) {
			return;
		}
		Map<Long, DrainClaim> claims = new HashMap<>();
		Map<Long, Integer> attempts = new HashMap<>();
		this.held.forEach((id, claim) -> {
			if (!claim.lost) {
				claims.put(id, claim);
				attempts.put(id, claim.intent().attempt());
			}
		});
		if (claims.isEmpty()) {
			return;
		}
		Map<Long, LeaseBeat> beats;
		try {
			beats = this.leases.extendLeases(this.owner, this.lease, attempts);
		}
		catch (RuntimeException ex) {
			logger.warn("Ductor's drainer could not extend the leases of " + claims.size() + " claimed intent(s); "
					+ "trying again in a third of the lease. If this lasts as long as the lease (" + this.lease
					+ "), the reconciler redrives them while they may still run", ex);
			this.rounds.failed(ex);
			return;
		}
		this.rounds.succeeded();
		List<Long> lost = new ArrayList<>();
		claims.forEach((id, claim) -> {
			// a claim settling or settled may have been completed before the beat read it
			if (beats.get(id) == LeaseBeat.LOST && !claim.settling && !claim.lost && this.held.get(id) == claim) {
				claim.lost = true;
				// held no more: never extended again, and not started if it has not
				// started yet
				this.held.remove(id, claim);
				lost.add(id);
			}
		});
		if (!lost.isEmpty()) {
			this.observer.drainerLeaseLost(lost.size());
			logger.warn("Ductor's drainer lost the lease of " + lost.size() + " intent(s) it holds "
					+ lost.subList(0, Math.min(lost.size(), MAX_IDS_LOGGED))
					+ ((lost.size() > MAX_IDS_LOGGED) ? "…" : "")
					+ ": the lease expired (it is never extended again), or the intent was redriven or another "
					+ "drainer holds it; the outcome of the attempt this drainer runs is ignored once the intent "
					+ "is redriven or claimed again");
		}
	}

}
