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

	private final Object database;

	private final Object ownTransaction;

	private Tick enclosing;

	private RunStatus outcome = RunStatus.ACTIVE;

	private String failureReason;

	/**
	 * @param database the {@code DataSource} the run lives in
	 * @param ownTransaction the transaction resource bound to that {@code DataSource}
	 * when this tick opened its own transaction; {@code null} when it joined one
	 */
	Tick(String runId, String stamp, long seq, int attempt, Object database, Object ownTransaction) {
		this.runId = runId;
		this.stamp = stamp;
		this.seq = seq;
		this.attempt = attempt;
		this.database = database;
		this.ownTransaction = ownTransaction;
	}

	/**
	 * @return the run being advanced
	 */
	public String runId() {
		return this.runId;
	}

	/**
	 * @return this tick's stamp
	 */
	public String stamp() {
		return this.stamp;
	}

	/**
	 * @return the sequence number this tick gets if it commits
	 */
	public long seq() {
		return this.seq;
	}

	/**
	 * @return 1 for the first computation, more when a version conflict made the tick
	 * recompute
	 */
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
	 * The tick whose step is running on this thread. Effects recorded by a step use it to
	 * link their intents to the run.
	 * @return the tick, or empty outside a step
	 */
	public static Optional<Tick> current() {
		return Optional.ofNullable(CURRENT.get());
	}

	/**
	 * The tick whose step is running {@code runId}'s tick on this thread, directly or
	 * through other ticks, if any.
	 */
	static Optional<Tick> enclosing(Object database, String runId) {
		for (Tick tick = CURRENT.get(); tick != null; tick = tick.enclosing) {
			if (tick.database == database && tick.runId.equals(runId)) {
				return Optional.of(tick);
			}
		}
		return Optional.empty();
	}

	/**
	 * The enclosing tick that opened {@code transaction}, if a tick on this thread did.
	 */
	static Optional<Tick> owning(Object transaction) {
		for (Tick tick = CURRENT.get(); tick != null; tick = tick.enclosing) {
			if (tick.ownTransaction != null && tick.ownTransaction == transaction) {
				return Optional.of(tick);
			}
		}
		return Optional.empty();
	}

	<S> S apply(TickStep<S> step, S state) {
		// a step may tick another run; when that returns, this tick is current again
		Tick outer = CURRENT.get();
		this.enclosing = outer;
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
