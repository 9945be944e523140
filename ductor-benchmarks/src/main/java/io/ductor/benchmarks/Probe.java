package io.ductor.benchmarks;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;

import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * What every system under test reports, the same way: producers stamp the moment their
 * transaction committed, the no-op handler (a {@code @DurableEffect}, a Modulith
 * listener, the raw drainer's loop) stamps the moment it is entered. Effects are numbered
 * {@code 0..expected-1}.
 * <p>
 * In lag mode it also keeps both instants per effect, on the JVM's monotonic clock. It
 * sends nothing to the database: the lag on the database clock is read from each system's
 * own table once a trial is over ({@link OutboxSystem#lagSql()}).
 */
final class Probe {

	private final int expected;

	private final AtomicIntegerArray seen;

	private final AtomicLong distinct = new AtomicLong();

	private final AtomicLong calls = new AtomicLong();

	private final AtomicLong firstCommit = new AtomicLong(Long.MAX_VALUE);

	private final AtomicLong firstDispatch = new AtomicLong(Long.MAX_VALUE);

	private final CountDownLatch all;

	private final long[] startNanos;

	private final long[] commitNanos;

	private final long[] dispatchNanos;

	private Probe(int expected, boolean track, boolean lag) {
		this.expected = expected;
		this.seen = track ? new AtomicIntegerArray(expected) : null;
		this.all = new CountDownLatch(1);
		this.startNanos = lag ? new long[expected] : null;
		this.commitNanos = lag ? new long[expected] : null;
		this.dispatchNanos = lag ? new long[expected] : null;
	}

	/** Counts dispatches and duplicates. */
	static Probe tracking(int expected) {
		return new Probe(expected, true, false);
	}

	/** Counts dispatches only: constant memory, for the capped-heap backlog. */
	static Probe counting(int expected) {
		return new Probe(expected, false, false);
	}

	/** Also keeps each effect's commit and dispatch instants. */
	static Probe lag(int expected) {
		return new Probe(expected, true, true);
	}

	int expected() {
		return this.expected;
	}

	/**
	 * Join the caller's transaction: stamp its commit (registered first, so it runs
	 * before any system's own after-commit work). Call at the start of the producer's
	 * transaction.
	 */
	void producing(int seq) {
		if (this.startNanos != null) {
			this.startNanos[seq] = System.nanoTime();
		}
		TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {

			@Override
			public void afterCommit() {
				committed(seq);
			}

		});
	}

	void committed(int seq) {
		long now = System.nanoTime();
		this.firstCommit.accumulateAndGet(now, Math::min);
		if (this.commitNanos != null) {
			this.commitNanos[seq] = now;
		}
	}

	/** The no-op handler of every system calls this, first thing. */
	void dispatched(long seq) {
		int index = (int) seq;
		if (this.firstDispatch.get() == Long.MAX_VALUE) {
			this.firstDispatch.compareAndSet(Long.MAX_VALUE, System.nanoTime());
		}
		if (this.dispatchNanos != null) {
			this.dispatchNanos[index] = System.nanoTime();
		}
		this.calls.incrementAndGet();
		if (this.seen == null || this.seen.getAndIncrement(index) == 0) {
			if (this.distinct.incrementAndGet() == this.expected) {
				this.all.countDown();
			}
		}
	}

	/**
	 * @return whether every effect was dispatched at least once within {@code timeout}
	 */
	boolean awaitAll(Duration timeout) throws InterruptedException {
		return this.all.await(timeout.toMillis(), TimeUnit.MILLISECONDS);
	}

	long firstCommitNanos() {
		return this.firstCommit.get();
	}

	/**
	 * @return when the first handler was entered: a backlog's drain is timed from its
	 * first claimed batch
	 */
	long firstDispatchNanos() {
		return this.firstDispatch.get();
	}

	long distinct() {
		return this.distinct.get();
	}

	/**
	 * @return dispatches beyond the first of each effect (at-least-once at work)
	 */
	long duplicates() {
		return this.calls.get() - this.distinct.get();
	}

	/**
	 * @return how long the producers' transactions took in milliseconds on the JVM clock,
	 * from the start of the system's work in them to their commit, for effects
	 * {@code from..expected-1}
	 */
	double[] jvmTransactionMillis(int from) {
		double[] durations = new double[this.expected - from];
		for (int i = from; i < this.expected; i++) {
			durations[i - from] = (this.commitNanos[i] - this.startNanos[i]) / 1e6;
		}
		return durations;
	}

	/**
	 * @return commit-to-dispatch lags in milliseconds on the JVM clock, for effects
	 * {@code from..expected-1}
	 */
	double[] jvmLagsMillis(int from) {
		double[] lags = new double[this.expected - from];
		for (int i = from; i < this.expected; i++) {
			lags[i - from] = (this.dispatchNanos[i] - this.commitNanos[i]) / 1e6;
		}
		return lags;
	}

}
