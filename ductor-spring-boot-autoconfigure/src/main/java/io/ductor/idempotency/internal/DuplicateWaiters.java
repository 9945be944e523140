package io.ductor.idempotency.internal;

import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;

import io.ductor.idempotency.IdempotentRequest;
import io.ductor.jdbc.internal.PostgresNotificationListener.NotificationHandler;

/**
 * The duplicates parked in this JVM, by key. A notification that a key settled (from this
 * JVM or, through {@code LISTEN}, from any other) wakes its waiters, who then look at the
 * row again.
 */
public class DuplicateWaiters implements NotificationHandler {

	private final Map<String, Set<CountDownLatch>> waiters = new ConcurrentHashMap<>();

	/**
	 * Register before looking at the row, so that a settlement in between is not missed.
	 */
	/**
	 * The channel payload naming a key: scope, pool and key joined by unit separators.
	 * @param request the key
	 * @return its waiter id
	 */
	public static String waiterId(IdempotentRequest request) {
		return request.tenantScope() + '\u001f' + request.pool() + '\u001f' + request.key();
	}

	CountDownLatch register(String waiterId) {
		CountDownLatch latch = new CountDownLatch(1);
		this.waiters.compute(waiterId, (id, set) -> {
			Set<CountDownLatch> latches = (set != null) ? set : ConcurrentHashMap.newKeySet();
			latches.add(latch);
			return latches;
		});
		return latch;
	}

	void unregister(String waiterId, CountDownLatch latch) {
		this.waiters.computeIfPresent(waiterId, (id, set) -> {
			set.remove(latch);
			return set.isEmpty() ? null : set;
		});
	}

	void wake(String waiterId) {
		Set<CountDownLatch> latches = this.waiters.get(waiterId);
		if (latches != null) {
			latches.forEach(CountDownLatch::countDown);
		}
	}

	/**
	 * @return how many duplicates are parked right now
	 */
	int parked() {
		return this.waiters.values().stream().mapToInt(Set::size).sum();
	}

	@Override
	public void notified(String payload) {
		wake(payload);
	}

	@Override
	public void connected() {
		// notifications may have been lost while the listener was away: everyone looks
		// again
		this.waiters.values().forEach((latches) -> latches.forEach(CountDownLatch::countDown));
	}

}
