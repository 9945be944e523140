package io.ductor.idempotency.web;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;

/**
 * Holds the handlers of chosen keys until the test opens the gate, and counts how often
 * each key's handler ran.
 */
final class Gate {

	private final Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();

	private final Map<String, CountDownLatch> closed = new ConcurrentHashMap<>();

	private final Map<String, Object> seen = new ConcurrentHashMap<>();

	/** Hold the handler of {@code key} at {@link #pass} until {@link #open}. */
	void close(String key) {
		this.closed.put(key, new CountDownLatch(1));
	}

	void open(String key) {
		CountDownLatch latch = this.closed.remove(key);
		if (latch != null) {
			latch.countDown();
		}
	}

	/**
	 * A handler of {@code key} runs: counted, and held while its gate is closed.
	 * @return how often the key's handler ran, this run included
	 */
	int pass(String key) {
		int run = this.runs.computeIfAbsent(key, (k) -> new AtomicInteger()).incrementAndGet();
		CountDownLatch latch = this.closed.get(key);
		if (latch != null) {
			try {
				if (!latch.await(60, TimeUnit.SECONDS)) {
					throw new IllegalStateException("the gate of " + key + " never opened");
				}
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new IllegalStateException(ex);
			}
		}
		return run;
	}

	/**
	 * Wait at {@code name}'s closed gate until {@link #open}, whatever interrupts the
	 * thread meanwhile (it is interrupted again afterwards); not counted as a run.
	 */
	void holdUninterruptibly(String name) {
		CountDownLatch latch = this.closed.get(name);
		if (latch == null) {
			return;
		}
		boolean interrupted = false;
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
		try {
			while (true) {
				try {
					long left = deadline - System.nanoTime();
					if (latch.await(Math.max(left, 0), TimeUnit.NANOSECONDS)) {
						return;
					}
					throw new IllegalStateException("the gate " + name + " never opened");
				}
				catch (InterruptedException ex) {
					interrupted = true;
				}
			}
		}
		finally {
			if (interrupted) {
				Thread.currentThread().interrupt();
			}
		}
	}

	int runs(String key) {
		AtomicInteger runs = this.runs.get(key);
		return (runs != null) ? runs.get() : 0;
	}

	/** Remembers something a handler saw (a backend pid, a thread), by key. */
	void saw(String key, Object what) {
		this.seen.put(key, what);
	}

	Object seen(String key) {
		return this.seen.get(key);
	}

	static void await(String what, BooleanSupplier condition) throws InterruptedException {
		org.awaitility.Awaitility.await(what)
			.atMost(java.time.Duration.ofSeconds(60))
			.pollInterval(java.time.Duration.ofMillis(5))
			.until(condition::getAsBoolean);
	}

}
