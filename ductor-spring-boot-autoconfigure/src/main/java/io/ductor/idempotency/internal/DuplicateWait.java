package io.ductor.idempotency.internal;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.Supplier;

import javax.sql.DataSource;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

import io.ductor.idempotency.DuplicatePolicy;
import io.ductor.idempotency.IdempotencyKeyInFlightException;
import io.ductor.idempotency.IdempotencyService;
import io.ductor.idempotency.IdempotentRequest;
import io.ductor.idempotency.ReserveOutcome.InFlight;
import io.ductor.idempotency.ReserveOutcome.Reserved;
import io.ductor.idempotency.ReserveOutcome;
import io.ductor.jdbc.internal.DatabaseTransactions;
import io.ductor.jdbc.internal.PostgresNotificationListener;

/**
 * The wait protocol of duplicates under {@link DuplicatePolicy#WAIT}: a duplicate parks,
 * with no connection held, until the key's holder settles it or the poll interval has
 * passed, and looks again, up to the wait timeout. A settlement in this instance wakes it
 * at once; one in another instance through a notification on
 * {@value IdempotencyService#CHANNEL}. A duplicate of another instance's open
 * one-transaction request, which cannot mark the row as awaited, announces on
 * {@value IdempotencyService#WAITING_CHANNEL} that it waits, and the holder's instance
 * announces the end of that transaction.
 */
public final class DuplicateWait {

	private static final Log logger = LogFactory.getLog(IdempotencyService.class);

	private final IdempotencyStore store;

	private final IdempotencySettings settings;

	private final DuplicateWaiters waiters = new DuplicateWaiters();

	/**
	 * The keys held by an open one-transaction reservation of this instance, each with
	 * whether a duplicate of another instance announced that it waits for it.
	 */
	private final Map<String, Hold> held = new ConcurrentHashMap<>();

	/** Whose transactions end a settlement: it wakes duplicates after their commit. */
	private final DataSource dataSource;

	public DuplicateWait(IdempotencyStore store, IdempotencySettings settings, PostgresNotificationListener listener,
			DataSource dataSource) {
		this.store = store;
		this.settings = settings;
		this.dataSource = dataSource;
		if (listener != null) {
			listener.subscribe(IdempotencyService.CHANNEL, this.waiters);
			listener.subscribe(IdempotencyService.WAITING_CHANNEL,
					(waiterId) -> this.held.computeIfPresent(waiterId, (id, hold) -> {
						hold.awaited = true;
						return hold;
					}));
		}
	}

	/**
	 * @return how many duplicates are parked right now, waiting for their key
	 */
	public int parked() {
		return this.waiters.parked();
	}

	/**
	 * Looks at a key until it is settled or the wait timeout has passed: between two
	 * looks the caller parks, with no connection held, until the key's holder settles it
	 * (a local settlement or a notification wakes it) or the poll interval has passed.
	 * After the first look that finds it held, {@code announce} asks the holder to
	 * notify, and the key is looked at once more: settled meanwhile means no notification
	 * is coming, but that look sees it. The look after the wait timeout is the last one.
	 * @return the answer of the last look
	 */
	public <R> R awaitSettled(IdempotentRequest request, Looker<R> looker, Runnable announce) {
		long deadline = System.nanoTime() + this.settings.waitTimeout().toNanos();
		boolean announced = false;
		while (true) {
			CountDownLatch wakeUp = this.waiters.register(DuplicateWaiters.waiterId(request));
			try {
				boolean last = System.nanoTime() - deadline >= 0;
				Look<R> look = looker.look(wakeUp, last);
				if (look.settled() || last) {
					return look.answer().get();
				}
				if (!announced) {
					announce.run();
					announced = true;
					continue;
				}
				long left = deadline - System.nanoTime();
				if (left > 0
						&& wakeUp.await(Math.min(left, this.settings.pollInterval().toNanos()), TimeUnit.NANOSECONDS)) {
					// settled or released: a reclaim clears the mark, so a new holder
					// must be asked again
					announced = false;
				}
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw interrupted(request);
			}
			finally {
				this.waiters.unregister(DuplicateWaiters.waiterId(request), wakeUp);
			}
		}
	}

	/**
	 * Looks at a key inside the caller's transaction. The key's advisory lock keeps a
	 * look from waiting inside PostgreSQL for another open transaction; under
	 * {@link DuplicatePolicy#WAIT} it looks again (woken by a settlement in this
	 * instance, else every poll interval) until the wait timeout. It cannot roll the
	 * caller's transaction back, so it waits holding its connection, and never marks a
	 * row as awaited (that would lock the row until the caller's transaction ends).
	 * @param look one look at the key, told whether it is the last one
	 * @return the outcome of the last look
	 */
	public ReserveOutcome pollInTransaction(IdempotentRequest request, DuplicatePolicy policy,
			Function<Boolean, ReserveOutcome> look) {
		long deadline = System.nanoTime() + this.settings.waitTimeout().toNanos();
		while (true) {
			CountDownLatch wakeUp = this.waiters.register(DuplicateWaiters.waiterId(request));
			try {
				boolean last = policy == DuplicatePolicy.REJECT || System.nanoTime() - deadline >= 0;
				ReserveOutcome outcome = look.apply(last);
				if (outcome instanceof Reserved) {
					wakeWhenEnded(request);
				}
				if (!(outcome instanceof InFlight) || last) {
					return outcome;
				}
				long left = deadline - System.nanoTime();
				if (left > 0) {
					wakeUp.await(Math.min(left, this.settings.pollInterval().toNanos()), TimeUnit.NANOSECONDS);
				}
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw interrupted(request);
			}
			finally {
				this.waiters.unregister(DuplicateWaiters.waiterId(request), wakeUp);
			}
		}
	}

	private static IdempotencyKeyInFlightException interrupted(IdempotentRequest request) {
		return new IdempotencyKeyInFlightException("Interrupted while waiting for the request holding "
				+ request.describe() + " to finish; retry later with the same key");
	}

	/**
	 * Asks the holder of a key to announce its settlement: a two-phase holder's committed
	 * pending row is marked, so that its settlement notifies; another instance's open
	 * transaction is told that a duplicate waits. Nothing to ask when this instance holds
	 * the key in an open transaction: its end wakes the duplicates here.
	 */
	public void askHolderToAnnounce(IdempotentRequest request) {
		if (!this.held.containsKey(DuplicateWaiters.waiterId(request))) {
			this.store.markWaited(request);
			this.store.notify(IdempotencyService.WAITING_CHANNEL, DuplicateWaiters.waiterId(request));
		}
	}

	/**
	 * Marks a two-phase holder's pending row as awaited, so that its settlement notifies.
	 */
	public void markWaited(IdempotentRequest request) {
		this.store.markWaited(request);
	}

	/**
	 * @return whether a one-transaction reservation of this instance holds the key in an
	 * open transaction
	 */
	public boolean heldHere(IdempotentRequest request) {
		return this.held.containsKey(DuplicateWaiters.waiterId(request));
	}

	/**
	 * A one-transaction reservation of this instance now holds the key: the caller is no
	 * duplicate any more, so it is not parked, and the end of its transaction wakes this
	 * instance's duplicates.
	 * @param wakeUp the caller's registration as a duplicate, from its last look
	 * @return the hold, to hand to {@link #announceEnd} once the transaction has ended
	 */
	public Hold holdInTransaction(IdempotentRequest request, CountDownLatch wakeUp) {
		this.waiters.unregister(DuplicateWaiters.waiterId(request), wakeUp);
		Hold hold = new Hold(request);
		this.held.put(DuplicateWaiters.waiterId(request), hold);
		wakeWhenEnded(request);
		return hold;
	}

	/**
	 * After a one-transaction reservation's transaction ended (committed or rolled back,
	 * the connection returned): when a duplicate of another instance announced that it
	 * waits for the key, announce the end, with no transaction held. Duplicates of this
	 * instance were woken by the transaction's completion already. Only the hold's owner
	 * ends it: a duplicate of this instance that looked at the key meanwhile holds
	 * nothing, and must not make the holder forget that another instance waits.
	 * @param hold what {@link #holdInTransaction} returned
	 */
	public void announceEnd(Hold hold) {
		IdempotentRequest request = hold.request;
		if (!this.held.remove(DuplicateWaiters.waiterId(request), hold) || !hold.awaited) {
			return;
		}
		try {
			this.store.notify(IdempotencyService.CHANNEL, DuplicateWaiters.waiterId(request));
		}
		catch (RuntimeException ex) {
			// the duplicates look again every poll interval
			logger.debug("Could not announce the end of " + request.describe() + " to other instances", ex);
		}
	}

	/**
	 * Wakes this instance's duplicates when the current database transaction ends,
	 * committed or rolled back.
	 */
	void wakeWhenEnded(IdempotentRequest request) {
		if (DatabaseTransactions.active(this.dataSource)) {
			wakeAfterCommit(request);
		}
	}

	/**
	 * Wakes this instance's duplicates now, or when the current database transaction ends
	 * (a transaction of another resource, a message broker's, commits nothing of the
	 * key).
	 */
	public void wakeAfterCommit(IdempotentRequest request) {
		if (!DatabaseTransactions.active(this.dataSource)) {
			this.waiters.wake(DuplicateWaiters.waiterId(request));
			return;
		}
		TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {

			@Override
			public void afterCompletion(int status) {
				DuplicateWait.this.waiters.wake(DuplicateWaiters.waiterId(request));
			}

		});
	}

	/**
	 * A key held by an open one-transaction reservation of this instance, and whether a
	 * duplicate of another instance announced that it waits for it.
	 */
	public static final class Hold {

		private final IdempotentRequest request;

		private volatile boolean awaited;

		private Hold(IdempotentRequest request) {
			this.request = request;
		}

	}

	/**
	 * One look at a held key: whether it is settled, and the answer to give if the wait
	 * ends here.
	 */
	public record Look<R>(boolean settled, Supplier<R> answer) {
	}

	@FunctionalInterface
	public interface Looker<R> {

		/**
		 * @param wakeUp what wakes the caller before the next look, registered for this
		 * one
		 * @param last whether the wait ends after this look, whatever it finds
		 */
		Look<R> look(CountDownLatch wakeUp, boolean last);

	}

}
