package io.ductor.effect.internal;

import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * Where the claim thread waits for the next poll. A wake-up that arrives while it is busy
 * is kept, so that its next wait returns at once: no commit's wake-up is lost between two
 * claims.
 */
public final class Waiter {

	private final Object signal = new Object();

	private boolean woken;

	/** Ends the current wait, or the next one when nobody waits. */
	void wake() {
		synchronized (this.signal) {
			this.woken = true;
			this.signal.notifyAll();
		}
	}

	/**
	 * Waits until woken or {@code nanos} have passed; returns at once when woken since
	 * the last wait, or when {@code skip} says so.
	 * @return {@code false} when the waiting thread was interrupted (its interrupt flag
	 * set again)
	 */
	boolean await(long nanos, BooleanSupplier skip) {
		synchronized (this.signal) {
			try {
				if (!this.woken && !skip.getAsBoolean()) {
					TimeUnit.NANOSECONDS.timedWait(this.signal, nanos);
				}
				return true;
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				return false;
			}
			finally {
				this.woken = false;
			}
		}
	}

}
