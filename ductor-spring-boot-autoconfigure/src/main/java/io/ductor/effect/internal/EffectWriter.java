package io.ductor.effect.internal;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import javax.sql.DataSource;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

import io.ductor.IdempotencyKeyReuseException;
import io.ductor.effect.DurableEffectException;
import io.ductor.effect.internal.IntentClaims.ClaimedIntent;
import io.ductor.internal.Ids;
import io.ductor.jdbc.internal.CommittingTransactions;
import io.ductor.jdbc.internal.DatabaseTransactions;
import io.ductor.metrics.internal.DuctorObserver;
import io.ductor.observation.internal.DuctorInstrumentation;
import io.ductor.observation.internal.DuctorObservations;
import io.ductor.run.internal.RunningTick;

/**
 * Records effect intents in the caller's transaction: resolves the key, writes the
 * payload, binds the key to it, and arranges what happens at commit. An intent due at
 * commit, without an ordering key, not an alarm and not recorded by a run's tick, is
 * recorded already claimed by the local drainer when it has room (in flight, attempt 1,
 * its lease from the database clock) and handed to its workers right after the commit: no
 * wake-up, no claim. Every other intent is recorded pending, and the commit wakes the
 * drainers (the local one at once, the others by notification). Recording is observed,
 * and the trace context of the recording (when a tracer is present) is stored with the
 * intent, for its attempts to continue.
 */
public class EffectWriter {

	private static final Log logger = LogFactory.getLog(EffectWriter.class);

	/**
	 * What this thread's open transactions hold until they complete (ordering keys,
	 * idempotency keys, alarms), by lock name, each with the transaction that holds it.
	 */
	private final ThreadLocal<Map<String, Scheduled>> held = new ThreadLocal<>();

	private final DataSource dataSource;

	private final IntentRecorder recorder;

	private final EffectPayloads payloads;

	private final CommitNotifier notifier;

	private final LocalDrainer localDrainer;

	private final boolean dispatchAtCommit;

	private final DuctorObserver observer;

	private final DuctorObservations observations;

	/**
	 * @param dataSource the database of the callers' transactions
	 * @param recorder inserts the intents
	 * @param payloads encodes the arguments
	 * @param notifier wakes the drainers of other instances after a commit
	 * @param localDrainer woken after a commit, and given the intents due at commit
	 * @param dispatchAtCommit whether an intent due at commit is recorded already leased
	 * to the local drainer, when it runs and has room, rather than pending
	 * @param instrumentation the meters and observations of its work
	 */
	public EffectWriter(DataSource dataSource, IntentRecorder recorder, EffectPayloads payloads,
			CommitNotifier notifier, LocalDrainer localDrainer, boolean dispatchAtCommit,
			DuctorInstrumentation instrumentation) {
		this.observer = instrumentation.metrics();
		this.observations = instrumentation.observations();
		this.dataSource = dataSource;
		this.recorder = recorder;
		this.payloads = payloads;
		this.notifier = notifier;
		this.localDrainer = localDrainer;
		this.dispatchAtCommit = dispatchAtCommit;
	}

	/**
	 * Record one intent.
	 * @param effect the effect
	 * @param args the call's arguments
	 * @param key the idempotency key, or {@code null} to evaluate the effect's key
	 * expression
	 * @param orderingKey the ordering key, or {@code null} to evaluate the effect's
	 * expression
	 * @param delay the delay, or {@code null} for the effect's own
	 * @param alarmName the alarm this intent is an occurrence of, or {@code null}
	 * @return the intent's key
	 */
	public String record(EffectDefinition effect, Object[] args, String key, String orderingKey, Duration delay,
			String alarmName) {
		RunningTick tick = RunningTick.current().orElse(null);
		return record(effect, args, key, orderingKey, delay, alarmName, (tick != null) ? tick.runId() : null);
	}

	/**
	 * Record one intent linked to {@code runId} whatever tick is current: a run's
	 * compensation.
	 * @return the intent's key
	 */
	public String record(EffectDefinition effect, Object[] args, String key, String orderingKey, Duration delay,
			String alarmName, String runId) {
		requireTransaction(effect.name());
		EffectPayloads.Payload payload = this.payloads.encode(effect, args);
		String resolvedKey = (key != null) ? key : evaluate(effect.key(), args);
		resolvedKey = (resolvedKey != null) ? requireKey("idempotency key", resolvedKey, effect)
				: UUID.randomUUID().toString();
		String ordering = (orderingKey != null) ? orderingKey : evaluate(effect.orderingKey(), args);
		// a key another transaction inserted is waited for until that one completes
		holdUntilCommit("ductor.key:" + resolvedKey,
				"Effect '" + effect.name() + "': idempotency key '" + resolvedKey + "'",
				"Record it in the outer transaction, or after it commits.");
		if (ordering != null) {
			requireKey("ordering key", ordering, effect);
			holdUntilCommit("ductor.ordering:" + ordering,
					"Effect '" + effect.name() + "': ordering key '" + ordering + "'",
					"Record it in the outer transaction, or after it commits.");
			// same-key writers commit one after the other, so id order is commit order
			this.recorder.lockUntilCommit("ductor.ordering:" + ordering);
		}
		Duration wait = (delay != null) ? delay : effect.delay();
		DuctorObservations.Recording recording = this.observations.schedule(effect.name(), effect.receiver().name(),
				resolvedKey);
		try {
			IntentRecorder.NewIntent intent = new IntentRecorder.NewIntent(effect.name(), resolvedKey, payload.json(),
					payload.fingerprint(), effect.receiver(), effect.maxAttempts(), wait, ordering, alarmName, runId,
					TraceContexts.encode(recording.traceContext()));
			boolean recorded = insert(effect, intent, payload);
			recording.outcome(recorded ? "recorded" : "duplicate");
			return resolvedKey;
		}
		catch (RuntimeException ex) {
			recording.outcome("error");
			recording.error(ex);
			throw ex;
		}
		finally {
			recording.close();
		}
	}

	/**
	 * Notes that the current transaction holds {@code lockName} until it completes (a
	 * lock it takes next, or a row it writes), after making sure that no transaction this
	 * thread suspended holds it: a transaction started inside another one (such as
	 * {@code REQUIRES_NEW}) would wait for that one, which waits for it, on the same
	 * thread, for ever. A {@code NESTED} transaction is its outer one: it holds what that
	 * one holds.
	 * @param lockName what is held
	 * @param what what is held, for the message, such as {@code Alarm 'reminder'}
	 * @param advice what to do instead, for the message
	 * @throws DurableEffectException when a transaction this thread suspended holds it
	 */
	public void holdUntilCommit(String lockName, String what, String advice) {
		Scheduled current = scheduled();
		Map<String, Scheduled> held = this.held.get();
		Scheduled holder = (held != null) ? held.get(lockName) : null;
		if (holder != null && holder.completed) {
			// completed on another thread (a JTA timeout): it holds nothing any more
			held.remove(lockName);
			holder = null;
		}
		if (holder == current) {
			return;
		}
		if (holder != null) {
			throw new DurableEffectException(what + " is held until its commit by a transaction this thread "
					+ "suspended (this call runs in a transaction started inside it, such as REQUIRES_NEW): it would "
					+ "wait for that transaction, which waits for it. " + advice);
		}
		if (held == null) {
			held = new HashMap<>();
			this.held.set(held);
		}
		held.put(lockName, current);
		current.hold(lockName);
	}

	/**
	 * Insert the intent, leased to this instance or pending, and arrange its commit.
	 * @return whether it was recorded; {@code false} when its key is bound to an intent
	 * already (with the same payload)
	 */
	private boolean insert(EffectDefinition effect, IntentRecorder.NewIntent intent, EffectPayloads.Payload payload) {
		Duration wait = intent.delay();
		String resolvedKey = intent.key();
		String ordering = intent.orderingKey();
		String alarmName = intent.alarmName();
		String runId = intent.runId();
		// due at commit, unordered, not an alarm, not a run's: recorded already leased to
		// this instance when it
		// has room. A run's intents stay pending until claimed, so that the run failing
		// in the same
		// transaction still finds them never attempted and cancels them instead of
		// compensating them.
		// An effect with a concurrency limit is always claimed: the claim is what takes
		// its slot.
		Handoff handoff = (wait.isZero() && ordering == null && alarmName == null && runId == null
				&& !effect.isLimited() && this.dispatchAtCommit) ? this.localDrainer.reserve() : null;
		ClaimedIntent leased = null;
		long id;
		try {
			if (handoff != null) {
				leased = this.recorder.insertLeased(intent, handoff.owner(), handoff.lease());
				id = (leased != null) ? leased.id() : 0;
			}
			else {
				id = this.recorder.insert(intent);
			}
		}
		catch (RuntimeException ex) {
			if (handoff != null) {
				handoff.cancel();
			}
			throw ex;
		}
		if (id == 0) {
			if (handoff != null) {
				handoff.cancel();
			}
			String[] binding = this.recorder.keyBinding(resolvedKey).orElseThrow();
			if (!binding[1].equals(payload.fingerprint())) {
				throw new IdempotencyKeyReuseException(
						"Idempotency key '" + resolvedKey + "' is already bound to an intent of effect '" + binding[0]
								+ "' with other arguments; cannot reuse it for '" + effect.name()
								+ "' with these arguments. Derive keys from the operation and its payload.");
			}
			return false;
		}
		onCommit(effect.name(), wait.isZero(), handoff, leased);
		return true;
	}

	/**
	 * Refuses to record outside a read-write transaction on Ductor's DataSource: a
	 * Spring-managed transaction that holds a connection of that DataSource, not in
	 * auto-commit. A transaction of another transaction manager (a message broker's,
	 * another database's) in which Ductor's DataSource only lends a connection in
	 * auto-commit is none: an intent written there would commit on its own, whatever that
	 * transaction does.
	 * @param effectName what is being recorded, for the message
	 * @throws DurableEffectException when there is no such transaction, or it is
	 * read-only
	 */
	public void requireTransaction(String effectName) {
		if (!DatabaseTransactions.active(this.dataSource)) {
			throw outsideTransaction(effectName);
		}
		if (TransactionSynchronizationManager.isCurrentTransactionReadOnly()) {
			throw new DurableEffectException("Effect '" + effectName + "' was called inside a read-only transaction; "
					+ "recording an intent needs a read-write transaction");
		}
		if (!TransactionSynchronizationManager.isSynchronizationActive() || CommittingTransactions.committing()
				|| (TransactionSynchronizationManager.getResource(this) instanceof Scheduled scheduled
						&& scheduled.completing)) {
			// synchronization is off from afterCompletion on (or never on: then nothing
			// would hand the intent over)
			throw calledWhileCompleting(effectName);
		}
	}

	private static DurableEffectException calledWhileCompleting(String effectName) {
		return new DurableEffectException("Effect '" + effectName + "' was called while its transaction was "
				+ "completing (from an afterCommit or afterCompletion callback, or a @TransactionalEventListener "
				+ "of phase AFTER_COMMIT), where nothing it writes commits with that transaction. Record it in a "
				+ "transaction of its own (Propagation.REQUIRES_NEW).");
	}

	private static DurableEffectException outsideTransaction(String effectName) {
		return new DurableEffectException("Effect '" + effectName + "' was called outside a transaction on "
				+ "Ductor's DataSource (a transaction of another transaction manager, in which a connection of "
				+ "Ductor's DataSource commits every statement on its own, is none), so its intent could not be recorded atomically with the "
				+ "caller's work. Call it from a @Transactional method, a TransactionTemplate, or a TickService step "
				+ "whose transaction manager manages Ductor's DataSource.");
	}

	/**
	 * After the commit, hand the intents recorded leased to this instance to its workers,
	 * count what was scheduled and, for intents recorded pending, wake the local drainer
	 * and (when one is due at once) have the drainers of other instances notified, once
	 * per transaction. When the transaction does not commit, the places reserved for
	 * leased intents are given up.
	 */
	private void onCommit(String effectName, boolean dueNow, Handoff handoff, ClaimedIntent leased) {
		Scheduled scheduled = scheduled();
		scheduled.add(effectName);
		if (handoff != null) {
			scheduled.handOver(handoff, leased);
			return;
		}
		scheduled.claimable = true;
		if (dueNow && !scheduled.dueNow) {
			this.notifier.beforeCommit();
			scheduled.dueNow = true;
		}
	}

	/**
	 * @return what the current physical transaction has recorded, bound and registered
	 * for its completion the first time
	 */
	private Scheduled scheduled() {
		Scheduled scheduled = (Scheduled) TransactionSynchronizationManager.getResource(this);
		if (scheduled == null) {
			scheduled = new Scheduled();
			TransactionSynchronizationManager.registerSynchronization(scheduled);
			TransactionSynchronizationManager.bindResource(this, scheduled);
		}
		return scheduled;
	}

	/**
	 * What one physical transaction has recorded so far, and what happens when it
	 * completes: one object per transaction, however many intents it records. It is bound
	 * to the thread while its transaction is, and unbound while the transaction is
	 * suspended ({@code REQUIRES_NEW}, {@code NOT_SUPPORTED}), so that a transaction
	 * started inside it records into an object of its own and hands over its own intents
	 * at its own completion. A {@code NESTED} transaction is a savepoint of the same
	 * physical transaction: it records into the same object.
	 */
	private final class Scheduled implements TransactionSynchronization {

		/** The first effect it recorded, or {@code null} before its first intent. */
		private String first;

		private List<String> more;

		/** Whether an intent was recorded pending, for the drainers to claim. */
		private boolean claimable;

		/** Whether such an intent is due at once. */
		private boolean dueNow;

		private List<Handoff> handoffs;

		private List<ClaimedIntent> leased;

		/**
		 * Whether the transaction rolled back to a savepoint: leased intents may be gone.
		 */
		private boolean partlyRolledBack;

		/**
		 * Whether the transaction began to commit: if it then reports anything but a
		 * commit, the commit may have gone through.
		 */
		private boolean commitAttempted;

		/**
		 * Whether the transaction is completing: its work is done, and what is recorded
		 * from now on does not commit with it.
		 */
		private volatile boolean completing;

		/** Whether the transaction has completed. */
		private volatile boolean completed;

		/** What it holds until it completes, by lock name. */
		private List<String> holds;

		void hold(String lockName) {
			if (this.holds == null) {
				this.holds = new ArrayList<>();
			}
			this.holds.add(lockName);
		}

		void add(String effectName) {
			if (this.first == null) {
				this.first = effectName;
				return;
			}
			if (this.more == null) {
				this.more = new ArrayList<>();
			}
			this.more.add(effectName);
		}

		void handOver(Handoff handoff, ClaimedIntent intent) {
			if (this.handoffs == null) {
				this.handoffs = new ArrayList<>(2);
				this.leased = new ArrayList<>(2);
			}
			this.handoffs.add(handoff);
			this.leased.add(intent);
		}

		@Override
		public void savepointRollback(Object savepoint) {
			this.partlyRolledBack = true;
		}

		@Override
		public void suspend() {
			TransactionSynchronizationManager.unbindResourceIfPossible(EffectWriter.this);
		}

		@Override
		public void resume() {
			TransactionSynchronizationManager.unbindResourceIfPossible(EffectWriter.this);
			TransactionSynchronizationManager.bindResource(EffectWriter.this, this);
		}

		@Override
		public void beforeCommit(boolean readOnly) {
			this.commitAttempted = true;
		}

		@Override
		public void beforeCompletion() {
			this.completing = true;
		}

		/**
		 * Hands the leased intents over after a commit; gives their places up after a
		 * rollback; and hands them back to {@code pending} when the commit may or may not
		 * have gone through: a commit that reported an error is reported as
		 * {@link #STATUS_UNKNOWN} by some transaction managers and as
		 * {@link #STATUS_ROLLED_BACK} by others (Boot's {@code JdbcTransactionManager}
		 * rolls back after a failed commit, a no-op when the commit went through). An
		 * intent that does not exist is left alone by the hand-back; one that exists runs
		 * at the next claim.
		 */
		@Override
		public void afterCompletion(int status) {
			this.completed = true;
			TransactionSynchronizationManager.unbindResourceIfPossible(EffectWriter.this);
			Map<String, Scheduled> held = EffectWriter.this.held.get();
			if (held != null && this.holds != null) {
				this.holds.forEach((lockName) -> held.remove(lockName, this));
				if (held.isEmpty()) {
					EffectWriter.this.held.remove();
				}
			}
			boolean committed = status == STATUS_COMMITTED;
			boolean uncertain = !committed && (status == STATUS_UNKNOWN || this.commitAttempted);
			if (committed && !this.completing) {
				// registered after the transaction committed (from an afterCommit
				// callback): what it recorded was written after the commit, on a
				// connection that commits it later or never. Nothing is handed over; a
				// leased intent that does commit is redriven when its lease expires.
				if (this.first != null) {
					logger.warn(calledWhileCompleting(this.first).getMessage()
							+ " Its intents are not dispatched at commit: one that commits runs when its lease expires.");
				}
				if (this.handoffs != null) {
					this.handoffs.forEach(Handoff::cancel);
				}
				return;
			}
			if (this.handoffs != null) {
				if (committed && !this.partlyRolledBack) {
					for (int i = 0; i < this.handoffs.size(); i++) {
						this.handoffs.get(i).handOver(this.leased.get(i));
					}
				}
				else if (committed || uncertain) {
					Handoff.handBack(this.handoffs, this.leased);
				}
				else {
					this.handoffs.forEach(Handoff::cancel);
				}
			}
			if (uncertain && this.claimable) {
				EffectWriter.this.localDrainer.wakeUp();
			}
			if (committed) {
				if (this.first != null) {
					EffectWriter.this.observer.effectScheduled(this.first);
				}
				if (this.more != null) {
					this.more.forEach(EffectWriter.this.observer::effectScheduled);
				}
				if (this.claimable) {
					EffectWriter.this.localDrainer.wakeUp();
				}
				if (this.dueNow) {
					EffectWriter.this.notifier.afterCommit();
				}
			}
		}

	}

	private static String evaluate(EffectExpression expression, Object[] args) {
		return (expression != null) ? expression.evaluate(args) : null;
	}

	private static String requireKey(String what, String key, EffectDefinition effect) {
		try {
			return Ids.require(what, key);
		}
		catch (IllegalArgumentException ex) {
			throw new DurableEffectException("Effect '" + effect.name() + "': " + ex.getMessage(), ex);
		}
	}

}
