package io.ductor.run.internal;

import java.util.Optional;

import org.jspecify.annotations.Nullable;

import io.ductor.run.RunStatus;
import io.ductor.run.Tick;
import io.ductor.run.TickStep;

/**
 * The {@link Tick} a {@link TickStep} is computing, current on its thread while the step
 * runs.
 */
public final class RunningTick implements Tick {

	private static final ThreadLocal<RunningTick> CURRENT = new ThreadLocal<>();

	private final String runId;

	private final String stamp;

	private final long seq;

	private final int attempt;

	private final Object database;

	private final @Nullable Object ownTransaction;

	private @Nullable RunningTick enclosing;

	private RunStatus outcome = RunStatus.ACTIVE;

	private @Nullable String failureReason;

	/**
	 * @param database the {@code DataSource} the run lives in
	 * @param ownTransaction the transaction resource bound to that {@code DataSource}
	 * when this tick opened its own transaction; {@code null} when it joined one
	 */
	RunningTick(String runId, String stamp, long seq, int attempt, Object database, @Nullable Object ownTransaction) {
		this.runId = runId;
		this.stamp = stamp;
		this.seq = seq;
		this.attempt = attempt;
		this.database = database;
		this.ownTransaction = ownTransaction;
	}

	@Override
	public String runId() {
		return this.runId;
	}

	@Override
	public String stamp() {
		return this.stamp;
	}

	@Override
	public long seq() {
		return this.seq;
	}

	@Override
	public int attempt() {
		return this.attempt;
	}

	@Override
	public void complete() {
		this.outcome = RunStatus.COMPLETED;
		this.failureReason = null;
	}

	@Override
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
	public static Optional<RunningTick> current() {
		return Optional.ofNullable(CURRENT.get());
	}

	/**
	 * The tick whose step is running {@code runId}'s tick on this thread, directly or
	 * through other ticks, if any.
	 */
	static Optional<RunningTick> enclosing(Object database, String runId) {
		for (RunningTick tick = CURRENT.get(); tick != null; tick = tick.enclosing) {
			if (tick.database == database && tick.runId.equals(runId)) {
				return Optional.of(tick);
			}
		}
		return Optional.empty();
	}

	/**
	 * The enclosing tick that opened {@code transaction}, if a tick on this thread did.
	 */
	static Optional<RunningTick> owning(Object transaction) {
		for (RunningTick tick = CURRENT.get(); tick != null; tick = tick.enclosing) {
			if (tick.ownTransaction != null && tick.ownTransaction == transaction) {
				return Optional.of(tick);
			}
		}
		return Optional.empty();
	}

	<S> S apply(TickStep<S> step, S state) {
		// a step may tick another run; when that returns, this tick is current again
		RunningTick outer = CURRENT.get();
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

	@Nullable String failureReason() {
		return this.failureReason;
	}

}
