package io.ductor.modulithmachine.ledger;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.modulith.events.ApplicationModuleListener;
import org.springframework.stereotype.Component;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.support.TransactionTemplate;

import io.ductor.effect.EffectContext;
import io.ductor.modulithmachine.desk.Taken;

/**
 * Books a taken order by its publication's stable key, in a transaction of its own, as a
 * call to another system would: a booking survives a failure of the listener after it.
 * The next {@link #failNext N} calls fail after booking, so that a retry books again and
 * only the key keeps it to one booking.
 */
@Component
public class Ledger {

	private final JdbcClient jdbc;

	private final TransactionTemplate own;

	private final AtomicInteger failures = new AtomicInteger();

	private final Map<String, AtomicInteger> calls = new ConcurrentHashMap<>();

	private final Map<String, AtomicInteger> failed = new ConcurrentHashMap<>();

	private final Map<String, AtomicInteger> succeeded = new ConcurrentHashMap<>();

	Ledger(JdbcClient jdbc, PlatformTransactionManager transactions) {
		this.jdbc = jdbc;
		this.own = new TransactionTemplate(transactions);
		this.own.setPropagationBehavior(TransactionDefinition.PROPAGATION_REQUIRES_NEW);
	}

	@ApplicationModuleListener
	public void on(Taken event) {
		count(this.calls, event.id());
		String key = EffectContext.current().idempotencyKey();
		this.own.executeWithoutResult((status) -> this.jdbc
			.sql("INSERT INTO ledger_booking (booking_key, order_id) VALUES (?, ?) ON CONFLICT DO NOTHING")
			.params(key, event.id())
			.update());
		if (this.failures.getAndUpdate((left) -> Math.max(0, left - 1)) > 0) {
			count(this.failed, event.id());
			throw new IllegalStateException("the ledger is unavailable");
		}
		count(this.succeeded, event.id());
	}

	/** Fails the next {@code n} calls, whichever publications they run. */
	public void failNext(int n) {
		this.failures.addAndGet(n);
	}

	/** Fails no further calls. */
	public void heal() {
		this.failures.set(0);
	}

	public int calls(String id) {
		return get(this.calls, id);
	}

	public int failed(String id) {
		return get(this.failed, id);
	}

	public int succeeded(String id) {
		return get(this.succeeded, id);
	}

	private static void count(Map<String, AtomicInteger> counts, String id) {
		counts.computeIfAbsent(id, (key) -> new AtomicInteger()).incrementAndGet();
	}

	private static int get(Map<String, AtomicInteger> counts, String id) {
		AtomicInteger count = counts.get(id);
		return (count != null) ? count.get() : 0;
	}

}
