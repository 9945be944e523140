package io.ductor.run.internal;

import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;

import javax.sql.DataSource;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.dao.DuplicateKeyException;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.transaction.support.TransactionTemplate;

import io.ductor.internal.DbValues;
import io.ductor.internal.Ids;
import io.ductor.jdbc.internal.CommittingTransactions;
import io.ductor.json.internal.JsonCodec;
import io.ductor.metrics.internal.DuctorObserver;
import io.ductor.observation.internal.DuctorMdc;
import io.ductor.observation.internal.DuctorInstrumentation;
import io.ductor.observation.internal.DuctorObservations;
import io.ductor.run.Run;
import io.ductor.run.RunStatus;
import io.ductor.run.RunTransition;
import io.ductor.run.RunTypeMismatchException;
import io.ductor.run.StartOutcome;
import io.ductor.run.TickConflictException;
import io.ductor.run.TickOutcome;
import io.ductor.run.TickService;
import io.ductor.run.TickStep;
import io.ductor.run.UnknownRunException;
import io.ductor.run.internal.RunStore.RunRow;
import io.ductor.worker.internal.Backoff;

/**
 * Ductor's {@link TickService}, over {@code eec_run} and {@code eec_run_transition}.
 */
public final class DefaultTickService implements TickService {

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

	private final RunFailureHandler failureHandler;

	/**
	 * Create a tick service whose ticks are observed.
	 * @param dataSource the database holding Ductor's tables
	 * @param transactionManager the transaction manager of that database
	 * @param store the SQL of runs and their transitions, on that database
	 * @param json the codec for states and inputs
	 * @param maxAttempts how often a tick is computed before a version conflict is given
	 * up, at least 1
	 * @param backoff the wait between attempts
	 * @param instrumentation the meters and observations of its work
	 * @param failureHandler told, in its transaction, of every tick that fails a run
	 */
	public DefaultTickService(DataSource dataSource, PlatformTransactionManager transactionManager, RunStore store,
			JsonCodec json, int maxAttempts, Backoff backoff, DuctorInstrumentation instrumentation,
			RunFailureHandler failureHandler) {
		if (maxAttempts < 1) {
			throw new IllegalArgumentException("maxAttempts must be at least 1 but was " + maxAttempts);
		}
		this.dataSource = dataSource;
		this.store = store;
		this.transactions = new TransactionTemplate(transactionManager);
		this.separateTransactions = new TransactionTemplate(transactionManager);
		this.separateTransactions.setPropagationBehavior(TransactionDefinition.PROPAGATION_REQUIRES_NEW);
		this.json = json;
		this.maxAttempts = maxAttempts;
		this.backoff = backoff;
		this.observer = instrumentation.metrics();
		this.observations = instrumentation.observations();
		this.failureHandler = failureHandler;
	}

	@Override
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

	@Override
	public <S> TickOutcome<S> tick(String runId, String stamp, Class<S> stateType, TickStep<S> step) {
		return tick(runId, stamp, null, stateType, step);
	}

	@Override
	public <S> TickOutcome<S> tick(String runId, String stamp, @Nullable Object input, Class<S> stateType,
			TickStep<S> step) {
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
			RunningTick owner = RunningTick.owning(transaction).orElse(null);
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
		RunningTick.enclosing(this.dataSource, runId).ifPresent((tick) -> {
			throw new IllegalStateException("Tick '" + stamp + "' on run '" + runId + "' was called from the step of"
					+ " tick '" + tick.stamp() + "' on the same run; a step may not tick its own run (it would"
					+ " conflict with the tick running it every time). Return the new state from the step instead,"
					+ " or tick the run after the step's tick returns. Nothing was written");
		});
	}

	@Override
	public int compensateFailedRun(String runId) {
		Ids.require("runId", runId);
		Integer recorded = this.transactions.execute((status) -> {
			RunRow row = this.store.findForTick(runId, null, true).orElseThrow(() -> new UnknownRunException(runId));
			if (row.status() != RunStatus.FAILED) {
				throw new IllegalStateException(
						"Run '" + runId + "' is " + DbValues.of(row.status()) + "; only a failed run is compensated");
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

	@Override
	public <S> Optional<Run<S>> find(String runId, Class<S> stateType) {
		Ids.require("runId", runId);
		return this.store.find(runId).map((row) -> toRun(row, stateType));
	}

	@Override
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
		RunningTick tick = new RunningTick(runId, stamp, row.lastTransitionSeq() + 1, attempt, this.dataSource,
				ownTransaction);
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

		NestedTickConflict(String runId, String stamp, RunningTick owner, Object transaction) {
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
