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
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.transaction.support.TransactionTemplate;

import io.ductor.internal.Ids;
import io.ductor.jdbc.internal.CommittingTransactions;
import io.ductor.json.internal.JsonCodec;
import io.ductor.metrics.internal.DuctorObserver;
import io.ductor.observation.internal.DuctorMdc;
import io.ductor.observation.internal.DuctorObservations;
import io.ductor.run.internal.RunFailureHandler;
import io.ductor.run.internal.RunStore.RunRow;
import io.ductor.run.internal.RunStore;
import io.ductor.worker.internal.Backoff;

/**
 * Starts durable runs and advances them with ticks, exactly once per stamp.
 * <p>
 * A tick reads the run, runs its {@link TickStep} on the current state and commits the
 * new state with a conditional update on {@code record_version} that also appends one
 * {@code eec_run_transition} row, all in one transaction. A stamp that was applied before
 * writes nothing and answers {@link TickOutcome.Result#DUPLICATE}; a finished run answers
 * {@link TickOutcome.Result#TERMINAL}. When a concurrent tick wins the race the
 * transaction rolls back and the tick re-reads and recomputes after a jittered backoff,
 * up to the configured number of attempts, then throws {@link TickConflictException}.
 * <p>
 * The first attempt reads without a lock, so uncontended ticks never wait for each other.
 * A retry reads the run {@code FOR NO KEY UPDATE}: it queues behind the tick that beat it
 * instead of racing every newcomer again, so a busy run cannot starve one of its ticks.
 * The conditional update on {@code record_version} stays the authority either way.
 * <p>
 * Called inside a transaction on Ductor's {@code DataSource} (one that has that
 * {@code DataSource} bound, as {@code DataSourceTransactionManager} and
 * {@code JpaTransactionManager} on it do), a tick joins it: its writes commit with the
 * caller's, and a conflict is not retried (the caller's transaction is marked
 * rollback-only and {@link TickConflictException} is thrown) because only the caller can
 * redo its own work. Called inside a transaction of another resource only (another
 * {@code DataSource}'s transaction manager), a tick runs in a transaction of its own,
 * commits before it returns whatever the caller's transaction does later, and retries
 * conflicts as it does outside any transaction.
 * <p>
 * A step may tick another run. That nested tick joins the enclosing tick's transaction,
 * so both runs advance together or not at all; when the nested run was advanced
 * concurrently, the enclosing tick that opened the transaction rolls it back and
 * recomputes its own step (which ticks the nested run again), within its own
 * {@code ductor.ticks.max-attempts}. A step may not tick its own run, directly or through
 * other runs' steps: that tick is refused at once with an {@link IllegalStateException}
 * and nothing is written.
 */
public class TickService {

	private static final Log logger = LogFactory.getLog(TickService.class);

	private final DataSource dataSource;

	private final RunStore store;

	/** Joins a transaction on Ductor's {@code DataSource}, or opens one. */
	private final TransactionTemplate transactions;

	/**
	 * Opens a transaction of the tick's own while another resource's transaction is
	 * active.
	 */
	private final TransactionTemplate separateTransactions;

	private final JsonCodec json;

	private final int maxAttempts;

	private final Backoff backoff;

	private final DuctorObserver observer;

	private final DuctorObservations observations;

	private volatile RunFailureHandler failureHandler = RunFailureHandler.NONE;

	/**
	 * Create a tick service that reports to no observer.
	 * @param dataSource the database holding Ductor's tables
	 * @param transactionManager the transaction manager of that database
	 * @param json the codec for states and inputs
	 * @param maxAttempts how often a tick is computed before a version conflict is given
	 * up, at least 1
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
	 * @param maxAttempts how often a tick is computed before a version conflict is given
	 * up, at least 1
	 * @param backoff the wait between attempts
	 * @param observer what is told about every tick
	 */
	public TickService(DataSource dataSource, PlatformTransactionManager transactionManager, JsonCodec json,
			int maxAttempts, Backoff backoff, DuctorObserver observer) {
		this(dataSource, transactionManager, json, maxAttempts, backoff, observer, DuctorObservations.NOOP);
	}

	/**
	 * Create a tick service whose ticks are observed.
	 * @param dataSource the database holding Ductor's tables
	 * @param transactionManager the transaction manager of that database
	 * @param json the codec for states and inputs
	 * @param maxAttempts how often a tick is computed before a version conflict is given
	 * up, at least 1
	 * @param backoff the wait between attempts
	 * @param observer what is told about every tick
	 * @param observations where every tick is observed while it runs
	 */
	public TickService(DataSource dataSource, PlatformTransactionManager transactionManager, JsonCodec json,
			int maxAttempts, Backoff backoff, DuctorObserver observer, DuctorObservations observations) {
		if (maxAttempts < 1) {
			throw new IllegalArgumentException("maxAttempts must be at least 1 but was " + maxAttempts);
		}
		this.dataSource = dataSource;
		this.store = new RunStore(JdbcClient.create(dataSource));
		this.transactions = new TransactionTemplate(transactionManager);
		this.separateTransactions = new TransactionTemplate(transactionManager);
		this.separateTransactions.setPropagationBehavior(TransactionDefinition.PROPAGATION_REQUIRES_NEW);
		this.json = json;
		this.maxAttempts = maxAttempts;
		this.backoff = backoff;
		this.observer = observer;
		this.observations = observations;
	}

	/**
	 * Create a run, exactly once: starting an existing run id again with the same type
	 * writes nothing.
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
	 * @param stamp what makes this tick unique within the run (an event id, an attempt's
	 * key)
	 * @param stateType the type the state is read as
	 * @param step the state change
	 * @param <S> the state type
	 * @return applied, duplicate or terminal, with the run's state after the call
	 */
	public <S> TickOutcome<S> tick(String runId, String stamp, Class<S> stateType, TickStep<S> step) {
		return tick(runId, stamp, null, stateType, step);
	}

	/**
	 * Apply {@code step} to the run once for {@code stamp}, recording {@code input} (for
	 * example the answer being folded into the run) with the transition.
	 * @param runId the run
	 * @param stamp what makes this tick unique within the run
	 * @param input what the tick folds in, written as JSON into the transition; may be
	 * {@code null}
	 * @param stateType the type the state is read as
	 * @param step the state change
	 * @param <S> the state type
	 * @return applied, duplicate or terminal, with the run's state after the call
	 * @throws TickConflictException when concurrent ticks kept winning, or won while this
	 * tick ran inside the caller's transaction
	 * @throws IllegalStateException when called from the step of a tick of the same run
	 */
	public <S> TickOutcome<S> tick(String runId, String stamp, Object input, Class<S> stateType, TickStep<S> step) {
		Ids.require("runId", runId);
		Ids.require("stamp", stamp);
		Objects.requireNonNull(stateType, "stateType must not be null");
		Objects.requireNonNull(step, "step must not be null");
		refuseTickFromItsOwnRun(runId, stamp);
		String inputJson = (input != null) ? this.json.write(input, "input of tick '" + stamp + "'") : null;
		DuctorMdc.Restore mdc = DuctorMdc.tick(runId);
		DuctorObservations.Scope scope = this.observations.tick(runId);
		try {
			TickOutcome<S> outcome = tickObserved(runId, stamp, inputJson, stateType, step);
			scope.outcome(outcome.result().name().toLowerCase(Locale.ROOT));
			return outcome;
		}
		catch (RuntimeException | Error ex) {
			scope.outcome(
					(ex instanceof TickConflictException || ex instanceof NestedTickConflict) ? "conflict" : "error");
			scope.error(ex);
			throw ex;
		}
		finally {
			scope.close();
			mdc.close();
		}
	}

	private <S> TickOutcome<S> tickObserved(String runId, String stamp, String inputJson, Class<S> stateType,
			TickStep<S> step) {
		Object joined = joinableTransaction();
		if (joined != null) {
			return tickInJoinedTransaction(runId, stamp, inputJson, stateType, step, joined);
		}
		// a transaction of another resource is not this tick's: it runs in one of its own
		TransactionTemplate transactions = TransactionSynchronizationManager.isActualTransactionActive()
				? this.separateTransactions : this.transactions;
		Object[] opened = new Object[1];
		for (int attempt = 1;; attempt++) {
			int current = attempt;
			String conflictOn;
			try {
				TickOutcome<S> outcome = transactions.execute((status) -> {
					opened[0] = TransactionSynchronizationManager.getResource(this.dataSource);
					return tickOnce(runId, stamp, inputJson, stateType, step, current, opened[0]);
				});
				this.observer.tick(outcome.result().name().toLowerCase(Locale.ROOT), current);
				return outcome;
			}
			catch (VersionConflict ex) {
				conflictOn = runId;
			}
			catch (NestedTickConflict ex) {
				if (opened[0] == null || ex.transaction != opened[0]) {
					// the transaction of an enclosing tick of another DataSource's run:
					// its tick retries
					throw ex;
				}
				conflictOn = ex.runId;
			}
			if (attempt >= this.maxAttempts) {
				this.observer.tick("conflict", attempt);
				throw new TickConflictException("Tick '" + stamp + "' on run '" + runId + "' lost to concurrent ticks "
						+ attempt + " times (ductor.ticks.max-attempts=" + this.maxAttempts + ")"
						+ (conflictOn.equals(runId) ? ""
								: ", the last time on run '" + conflictOn + "' which its step ticked")
						+ "; nothing was written and re-submitting the same stamp is safe");
			}
			pause(this.backoff.delay(attempt), runId);
		}
	}

	/**
	 * A tick that joins a transaction it did not open: the caller's, or that of an
	 * enclosing tick whose step ticks this run. It is computed once; only the
	 * transaction's owner can redo the work around it.
	 */
	private <S> TickOutcome<S> tickInJoinedTransaction(String runId, String stamp, String inputJson, Class<S> stateType,
			TickStep<S> step, Object transaction) {
		try {
			TickOutcome<S> outcome = this.transactions
				.execute((status) -> tickOnce(runId, stamp, inputJson, stateType, step, 1, null));
			this.observer.tick(outcome.result().name().toLowerCase(Locale.ROOT), 1);
			return outcome;
		}
		catch (VersionConflict ex) {
			Tick owner = Tick.owning(transaction).orElse(null);
			if (owner != null) {
				throw new NestedTickConflict(runId, stamp, owner, transaction);
			}
			this.observer.tick("conflict", 1);
			throw new TickConflictException("Run '" + runId + "' was advanced by a concurrent tick while tick '" + stamp
					+ "' ran inside the caller's transaction; the caller's transaction is marked rollback-only:"
					+ " retry the caller's transaction");
		}
	}

	/**
	 * @return the transaction on Ductor's {@code DataSource} this thread is in, or
	 * {@code null}
	 */
	private Object joinableTransaction() {
		if (!TransactionSynchronizationManager.isActualTransactionActive()
				|| !TransactionSynchronizationManager.isSynchronizationActive()
				|| CommittingTransactions.committing()) {
			// none, or one that has begun to complete (an afterCommit or afterCompletion
			// callback runs): what a tick wrote there would commit late or never, so it
			// runs in a transaction of its own
			return null;
		}
		return TransactionSynchronizationManager.getResource(this.dataSource);
	}

	private void refuseTickFromItsOwnRun(String runId, String stamp) {
		Tick.enclosing(this.dataSource, runId).ifPresent((tick) -> {
			throw new IllegalStateException("Tick '" + stamp + "' on run '" + runId + "' was called from the step of"
					+ " tick '" + tick.stamp() + "' on the same run; a step may not tick its own run (it would"
					+ " conflict with the tick running it every time). Return the new state from the step instead,"
					+ " or tick the run after the step's tick returns. Nothing was written");
		});
	}

	/**
	 * Have {@code handler} told, in the transaction of every tick that fails a run, that
	 * the run failed. Ductor's effects use it to record the run's compensations.
	 * @param handler the handler
	 */
	public void onRunFailed(RunFailureHandler handler) {
		this.failureHandler = Objects.requireNonNull(handler, "handler must not be null");
	}

	/**
	 * Record again the compensations of a run that already failed, in the caller's
	 * transaction or one of its own: what the {@link RunFailureHandler} finds still to
	 * record (nothing, when the run failed with its compensations recorded, since each
	 * has a stable key), marking the run compensating when there are new ones. It is how
	 * an operator's {@code COMPENSATE} decision on a parked intent of a failed run undoes
	 * that step too.
	 * @param runId the failed run
	 * @return how many new compensations were recorded
	 * @throws IllegalStateException when the run is unknown or has not failed; nothing
	 * was written
	 */
	public int compensateFailedRun(String runId) {
		Ids.require("runId", runId);
		Integer recorded = this.transactions.execute((status) -> {
			RunRow row = this.store.findForTick(runId, null, true).orElseThrow(() -> new UnknownRunException(runId));
			if (row.status() != RunStatus.FAILED) {
				throw new IllegalStateException(
						"Run '" + runId + "' is " + row.status().dbValue() + "; only a failed run is compensated");
			}
			return failed(runId);
		});
		return (recorded != null) ? recorded : 0;
	}

	private int failed(String runId) {
		int recorded = this.failureHandler.runFailed(runId);
		if (recorded > 0) {
			this.store.markCompensating(runId);
		}
		return recorded;
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
			TickStep<S> step, int attempt, Object ownTransaction) {
		RunRow row = this.store.findForTick(runId, stamp, attempt > 1)
			.orElseThrow(() -> new UnknownRunException(runId));
		if (row.stampApplied() || row.status().isTerminal()) {
			TickOutcome.Result result = row.stampApplied() ? TickOutcome.Result.DUPLICATE : TickOutcome.Result.TERMINAL;
			return new TickOutcome<>(result, runId, readState(row, stateType), row.status(), row.recordVersion(),
					row.lastTransitionSeq(), attempt);
		}
		Tick tick = new Tick(runId, stamp, row.lastTransitionSeq() + 1, attempt, this.dataSource, ownTransaction);
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
		if (tick.outcome() == RunStatus.FAILED) {
			failed(runId);
		}
		return new TickOutcome<>(TickOutcome.Result.APPLIED, runId, next, tick.outcome(), row.recordVersion() + 1,
				tick.seq(), attempt);
	}

	private <S> S readState(RunRow row, Class<S> stateType) {
		return this.json.read(row.stateJson(), stateType, "state of run '" + row.id() + "'");
	}

	private <S> Run<S> toRun(RunRow row, Class<S> stateType) {
		return new Run<>(row.id(), row.type(), row.status(), readState(row, stateType), row.recordVersion(),
				row.lastTransitionSeq(), row.failureReason(), row.createdAt(), row.updatedAt(), row.compensation());
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

	/**
	 * A tick nested in another tick's step lost the race for its run: the enclosing tick
	 * that opened the transaction rolls it back and recomputes. Should the step catch it,
	 * the transaction is rollback-only all the same.
	 */
	private static final class NestedTickConflict extends TickConflictException {

		private final String runId;

		private final transient Object transaction;

		NestedTickConflict(String runId, String stamp, Tick owner, Object transaction) {
			super("Run '" + runId + "' was advanced by a concurrent tick while tick '" + stamp
					+ "' ran in the step of tick '" + owner.stamp() + "' on run '" + owner.runId() + "'; tick '"
					+ owner.stamp() + "' rolls back and recomputes its step");
			this.runId = runId;
			this.transaction = transaction;
		}

	}

	/** Rolls the tick's transaction back when its conditional update matched no row. */
	private static final class VersionConflict extends RuntimeException {

		VersionConflict() {
			super(null, null, false, false);
		}

	}

}
