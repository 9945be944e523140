package io.ductor.sample.fault;

import java.time.Duration;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Decides which {@link Fault} the next request to a simulated receiver gets: first the
 * faults queued with {@link #inject(Fault)} (by the page's buttons or a test), then at
 * random with the configured failure rate, half before and half after applying. Also
 * holds the receiver's answer back for its configured latency.
 */
public final class FaultPlan {

	private final double failureRate;

	private final Duration latency;

	private final Queue<Fault> queued = new ConcurrentLinkedQueue<>();

	/**
	 * @param receiver the receiver's failure rate and latency
	 */
	public FaultPlan(SimulationProperties.Receiver receiver) {
		this.failureRate = receiver.failureRate();
		this.latency = receiver.latency();
	}

	/**
	 * Make a coming request fail (or succeed, with {@link Fault#NONE}) whatever the
	 * failure rate. Queued faults are used in order, one per request.
	 * @param fault the fault
	 */
	public void inject(Fault fault) {
		this.queued.add(fault);
	}

	/**
	 * @return how many queued faults are still waiting for a request
	 */
	public int queued() {
		return this.queued.size();
	}

	/** Forget the queued faults. */
	public void clear() {
		this.queued.clear();
	}

	/**
	 * @return the fault for the request being handled now
	 */
	public Fault next() {
		Fault fault = this.queued.poll();
		if (fault != null) {
			return fault;
		}
		ThreadLocalRandom random = ThreadLocalRandom.current();
		if (this.failureRate <= 0 || random.nextDouble() >= this.failureRate) {
			return Fault.NONE;
		}
		return random.nextBoolean() ? Fault.BEFORE_APPLY : Fault.AFTER_APPLY;
	}

	/**
	 * Wait for the configured latency, as the answer travels back.
	 * @throws IllegalStateException when interrupted meanwhile
	 */
	public void delayAnswer() {
		if (this.latency.isZero()) {
			return;
		}
		try {
			Thread.sleep(this.latency.toMillis());
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("Interrupted while the answer was on its way", ex);
		}
	}

}
