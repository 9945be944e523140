package io.ductor.run;

import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;

import javax.sql.DataSource;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.dao.DuplicateKeyException;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.transaction.support.TransactionTemplate;

import io.ductor.Ids;
import io.ductor.json.JsonCodec;
import io.ductor.metrics.DuctorObserver;
import io.ductor.run.RunStore.RunRow;
import io.ductor.worker.Backoff;

/**
 * Starts durable runs and advances them with ticks, exactly once per stamp.
 * <p>
 * A tick reads the run, runs its {@link TickStep} on the current state and commits the new state
 * with a conditional update on {@code record_version} that also appends one
 * {@code eec_run_transition} row, all in one transaction. A stamp that was applied before writes
 * nothing and answers {@link TickOutcome.Result#DUPLICATE}; a finished run answers
 * {@link TickOutcome.Result#TERMINAL}. When a concurrent tick wins the race the transaction rolls
 * back and the tick re-reads and recomputes after a jittered backoff, up to the configured number
 * of attempts, then throws {@link TickConflictException}.
 * <p>
 * The first attempt reads without a lock, so uncontended ticks never wait for each other. A retry
 * reads the run {@code FOR NO KEY UPDATE}: it queues behind the tick that beat it instead of
 * racing every newcomer again, so a busy run cannot starve one of its ticks. The conditional
 * update on {@code record_version} stays the authority either way.
 * <p>
 * Called inside an existing transaction, a tick joins it: its writes commit with the caller's,
 * and a conflict is not retried (the caller's transaction is marked rollback-only and
 * {@link TickConflictException} is thrown) because only the caller can redo its own work.
 */
public class TickService {

	private static final Log logger = LogFactory.getLog(TickService.class);

	private final RunStore store;

	private final TransactionTemplate transactions;

	private final JsonCodec json;

	private final int maxAttempts;

	private final Backoff backoff;

	private final DuctorObserver observer;

	/**
	 * Create a tick service that reports to no observer.
	 * @param dataSource the database holding Ductor's tables
	 * @param transactionManager the transaction manager of that database
	 * @param json the codec for states and inputs
	 * @param maxAttempts how often a tick is computed before a version conflict is given up, at least 1
	 * @param backoff the wait between attempts
	 */
	public TickService(DataSource dataSource, PlatformTransactionManager transactionManager, JsonCodec json,
			int maxAttempts, Backoff backoff) {
		this(dataSource, transactionManager, json, maxAttempts, backoff, DuctorObserver.NOOP);
	}

	/**
	 * Create a tick service.
	 * @param dataSource the database holding Ductor's tables
	 * @param transactionManager the transaction manager of that database
	 * @param json the codec for states and inputs
	 * @param maxAttempts how often a tick is computed before a version conflict is given up, at least 1
	 * @param backoff the wait between attempts
	 * @param observer what is told about every tick
	 */
	public TickService(DataSource dataSource, PlatformTransactionManager transactionManager, JsonCodec json,
			int maxAttempts, Backoff backoff, DuctorObserver observer) {
		if (maxAttempts < 1) {
			throw new IllegalArgumentException("maxAttempts must be at least 1 but was " + maxAttempts);
		}
		this.store = new RunStore(JdbcClient.create(dataSource));
		this.transactions = new TransactionTemplate(transactionManager);
		this.json = json;
		this.maxAttempts = maxAttempts;
		this.backoff = backoff;
		this.observer = observer;
	}

	/**
	 * Create a run, exactly once: starting an existing run id again with the same type writes
	 * nothing.
	 * @param type the run type, an identifier (see {@link Ids})
	 * @param runId the run id, an identifier unique across types
	 * @param initialState the first state, written as JSON
	 * @return whether the run was created or already existed
	 * @throws RunTypeMismatchException when the id exists with another type
	 */
	public StartOutcome start(String type, String runId, Object initialState) {
		Ids.require("type", type);
		Ids.require("runId", runId);
		String state = this.json.write(initialState, "initial state of run '" + runId + "'");
		return this.transactions.execute((status) -> {
			if (this.store.insert(runId, type, state) == 1) {
				return StartOutcome.CREATED;
			}
			String existing = this.store.findType(runId).orElseThrow();
			if (!existing.equals(type)) {
				throw new RunTypeMismatchException(runId, existing, type);
			}
			return StartOutcome.ALREADY_STARTED;
		});
	}

	/**
	 * Apply {@code step} to the run once for {@code stamp}.
	 * @param runId the run
	 * @param stamp what makes this tick unique within the run (an event id, an attempt's key)
	 * @param stateType the type the state is read as
	 * @param step the state change
	 * @param <S> the state type
	 * @return applied, duplicate or terminal, with the run's state after the call
	 */
	public <S> TickOutcome<S> tick(String runId, String stamp, Class<S> stateType, TickStep<S> step) {
		return tick(runId, stamp, null, stateType, step);
	}

	/**
	 * Apply {@code step} to the run once for {@code stamp}, recording {@code input} (for example
	 * the answer being folded into the run) with the transition.
	 * @param runId the run
	 * @param stamp what makes this tick unique within the run
	 * @param input what the tick folds in, written as JSON into the transition; may be {@code null}
	 * @param stateType the type the state is read as
	 * @param step the state change
	 * @param <S> the state type
	 * @return applied, duplicate or terminal, with the run's state after the call
	 */
	public <S> TickOutcome<S> tick(String runId, String stamp, Object input, Class<S> stateType, TickStep<S> step) {
		Ids.require("runId", runId);
		Ids.require("stamp", stamp);
		Objects.requireNonNull(stateType, "stateType must not be null");
		Objects.requireNonNull(step, "step must not be null");
		String inputJson = (input != null) ? this.json.write(input, "input of tick '" + stamp + "'") : null;
		boolean joined = TransactionSynchronizationManager.isActualTransactionActive();
		for (int attempt = 1;; attempt++) {
			int current = attempt;
			try {
				TickOutcome<S> outcome = this.transactions
					.execute((status) -> tickOnce(runId, stamp, inputJson, stateType, step, current));
				this.observer.tick(outcome.result().name().toLowerCase(Locale.ROOT), current);
				return outcome;
			}
			catch (VersionConflict ex) {
				if (joined || attempt >= this.maxAttempts) {
					this.observer.tick("conflict", attempt);
				}
				if (joined) {
					throw new TickConflictException("Run '" + runId + "' was advanced by a concurrent tick while tick '"
							+ stamp + "' ran inside the caller's transaction; retry the caller's transaction");
				}
				if (attempt >= this.maxAttempts) {
					throw new TickConflictException("Tick '" + stamp + "' on run '" + runId + "' lost to concurrent ticks "
							+ attempt + " times (ductor.ticks.max-attempts=" + this.maxAttempts
							+ "); nothing was written and re-submitting the same stamp is safe");
				}
				pause(this.backoff.delay(attempt), runId);
			}
		}
	}

	/**
	 * Read a run.
	 * @param runId the run
	 * @param stateType the type the state is read as
	 * @param <S> the state type
	 * @return the run, or empty when no run has this id
	 */
	public <S> Optional<Run<S>> find(String runId, Class<S> stateType) {
		Ids.require("runId", runId);
		return this.store.find(runId).map((row) -> toRun(row, stateType));
	}

	/**
	 * Read a run's history.
	 * @param runId the run
	 * @return its transitions in sequence order, empty for an unknown run
	 */
	public List<RunTransition> transitions(String runId) {
		return this.store.transitions(Ids.require("runId", runId));
	}

	private <S> TickOutcome<S> tickOnce(String runId, String stamp, String inputJson, Class<S> stateType,
			TickStep<S> step, int attempt) {
		RunRow row = this.store.findForTick(runId, stamp, attempt > 1)
			.orElseThrow(() -> new UnknownRunException(runId));
		if (row.stampApplied() || row.status().isTerminal()) {
			TickOutcome.Result result = row.stampApplied() ? TickOutcome.Result.DUPLICATE : TickOutcome.Result.TERMINAL;
			return new TickOutcome<>(result, runId, readState(row, stateType), row.status(), row.recordVersion(),
					row.lastTransitionSeq(), attempt);
		}
		Tick tick = new Tick(runId, stamp, row.lastTransitionSeq() + 1, attempt);
		S next = tick.apply(step, readState(row, stateType));
		String nextJson = this.json.write(next, "state of run '" + runId + "'");
		try {
			if (this.store.advance(row, stamp, nextJson, inputJson, tick.outcome(), tick.failureReason()) == 0) {
				throw new VersionConflict();
			}
		}
		catch (DuplicateKeyException ex) {
			throw new VersionConflict();
		}
		return new TickOutcome<>(TickOutcome.Result.APPLIED, runId, next, tick.outcome(), row.recordVersion() + 1,
				tick.seq(), attempt);
	}

	private <S> S readState(RunRow row, Class<S> stateType) {
		return this.json.read(row.stateJson(), stateType, "state of run '" + row.id() + "'");
	}

	private <S> Run<S> toRun(RunRow row, Class<S> stateType) {
		return new Run<>(row.id(), row.type(), row.status(), readState(row, stateType), row.recordVersion(),
				row.lastTransitionSeq(), row.failureReason(), row.createdAt(), row.updatedAt());
	}

	private static void pause(Duration delay, String runId) {
		try {
			Thread.sleep(delay.toMillis(), delay.toNanosPart() % 1_000_000);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new TickConflictException("Interrupted while retrying a tick on run '" + runId + "'");
		}
		if (logger.isTraceEnabled()) {
			logger.trace("Retrying a tick on run '" + runId + "' after " + delay);
		}
	}

	/** Rolls the tick's transaction back when its conditional update matched no row. */
	private static final class VersionConflict extends RuntimeException {

		VersionConflict() {
			super(null, null, false, false);
		}

	}

}
