package io.ductor.run;

import java.util.Optional;

/**
 * The tick a {@link TickStep} is computing, and the means to finish the run with it.
 */
public final class Tick {

	private static final ThreadLocal<Tick> CURRENT = new ThreadLocal<>();

	private final String runId;

	private final String stamp;

	private final long seq;

	private final int attempt;

	private RunStatus outcome = RunStatus.ACTIVE;

	private String failureReason;

	Tick(String runId, String stamp, long seq, int attempt) {
		this.runId = runId;
		this.stamp = stamp;
		this.seq = seq;
		this.attempt = attempt;
	}

	/** @return the run being advanced */
	public String runId() {
		return this.runId;
	}

	/** @return this tick's stamp */
	public String stamp() {
		return this.stamp;
	}

	/** @return the sequence number this tick gets if it commits */
	public long seq() {
		return this.seq;
	}

	/** @return 1 for the first computation, more when a version conflict made the tick recompute */
	public int attempt() {
		return this.attempt;
	}

	/** Finish the run successfully when this tick commits. */
	public void complete() {
		this.outcome = RunStatus.COMPLETED;
		this.failureReason = null;
	}

	/**
	 * Finish the run as failed when this tick commits.
	 * @param reason why, kept with the run
	 */
	public void fail(String reason) {
		if (reason == null || reason.isBlank()) {
			throw new IllegalArgumentException("reason must not be " + ((reason == null) ? "null" : "blank"));
		}
		this.outcome = RunStatus.FAILED;
		this.failureReason = reason;
	}

	/**
	 * The tick whose step is running on this thread. Effects recorded by a step use it to link
	 * their intents to the run.
	 * @return the tick, or empty outside a step
	 */
	public static Optional<Tick> current() {
		return Optional.ofNullable(CURRENT.get());
	}

	<S> S apply(TickStep<S> step, S state) {
		// a step may tick another run; when that returns, this tick is current again
		Tick outer = CURRENT.get();
		CURRENT.set(this);
		try {
			return step.apply(state, this);
		}
		finally {
			if (outer != null) {
				CURRENT.set(outer);
			}
			else {
				CURRENT.remove();
			}
		}
	}

	RunStatus outcome() {
		return this.outcome;
	}

	String failureReason() {
		return this.failureReason;
	}

}
