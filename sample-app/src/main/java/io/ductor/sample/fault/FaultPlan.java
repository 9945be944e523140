package io.ductor.sample.fault;

import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Decides which {@link Fault} the next request to a simulated receiver gets: first the faults
 * queued with {@link #inject(Fault)} (by the page's buttons or a test), then at random with the
 * configured failure rate, half before and half after applying.
 */
public final class FaultPlan {

	private final double failureRate;

	private final Queue<Fault> queued = new ConcurrentLinkedQueue<>();

	/**
	 * @param failureRate the share of requests that fail at random, from 0 to 1
	 */
	public FaultPlan(double failureRate) {
		this.failureRate = failureRate;
	}

	/**
	 * Make a coming request fail (or succeed, with {@link Fault#NONE}) whatever the failure rate.
	 * Queued faults are used in order, one per request.
	 * @param fault the fault
	 */
	public void inject(Fault fault) {
		this.queued.add(fault);
	}

	/** @return how many queued faults are still waiting for a request */
	public int queued() {
		return this.queued.size();
	}

	/** Forget the queued faults. */
	public void clear() {
		this.queued.clear();
	}

	/** @return the fault for the request being handled now */
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
	 * Check a configured failure rate.
	 * @param property the property's name, for the message
	 * @param rate the rate
	 * @return the rate
	 */
	public static double checkRate(String property, double rate) {
		if (!(rate >= 0 && rate <= 1)) {
			throw new IllegalArgumentException(property + " must be between 0 and 1 but was " + rate);
		}
		return rate;
	}

}
