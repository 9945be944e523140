package io.ductor.effect.internal;

import java.time.Duration;
import java.util.List;
import java.util.function.Supplier;

import javax.sql.DataSource;

import org.aopalliance.intercept.MethodInterceptor;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.context.ApplicationEventPublisher;
import org.springframework.transaction.support.TransactionTemplate;

import io.ductor.effect.EffectNeedsDecisionEvent;
import io.ductor.effect.EffectOperations;
import io.ductor.effect.EffectOutbox;
import io.ductor.effect.EffectStatus;
import io.ductor.jdbc.internal.DuctorDatabase;
import io.ductor.jdbc.internal.PostgresNotificationListener;
import io.ductor.metrics.internal.DuctorObserver;
import io.ductor.observation.internal.DuctorObservations;
import io.ductor.run.TickService;
import io.ductor.run.internal.RunFailureHandler;
import io.ductor.worker.internal.Backoff;
import io.ductor.worker.internal.DuctorThreads;
import io.ductor.worker.internal.RetentionPurger;
import io.ductor.worker.internal.WorkerTask;

/**
 * The durable-effect feature assembled: the writer behind {@link DurableEffect} calls and
 * {@link EffectOutbox}, the drainer, the lease reconciler and the retention purger,
 * sharing the statements on {@code eec_effect_intent}.
 */
public final class DurableEffects implements AutoCloseable {

	private final IntentRecorder recorder;

	private final IntentClaims claims;

	private final IntentOutcomes outcomes;

	private final IntentReads reads;

	private final IntentRedrive redrive;

	private final IntentRetention retention;

	private final EffectWriter writer;

	private final EffectDrainer drainer;

	private final EffectDispatcher dispatcher;

	private final EffectOutbox outbox;

	private final DurableEffectInterceptor interceptor;

	private final CommitNotifier notifier;

	private final Settings settings;

	private final ApplicationEventPublisher events;

	private final EffectRegistry registry;

	private final EffectReconciliation reconciliation;

	private final Compensations compensations;

	private final EffectSlots slots;

	private final DuctorObserver observer;

	private final TransactionTemplate transactions;

	private final RecurringAlarmStore alarmStore;

	private final RecurringAlarms recurring;

	private final EffectOperations operations;

	private final io.ductor.effect.RecurringAlarms recurringAlarms;

	/**
	 * Takes the drainer's place for dispatch at commit while the drainer does not run.
	 */
	private volatile CallingThreadDrainer atCommit;

	/** The most reconciliation rounds one reconciler round asks, one after the other. */
	private static final int RECONCILE_BATCH_SIZE = 50;

	/**
	 * Assemble the feature, observing recordings and attempts.
	 * @param database the database holding {@code eec_effect_intent}, and the transaction
	 * manager of Ductor's own transactions on it
	 * @param registry the effects of this application
	 * @param jsonMapper the mapper for arguments
	 * @param events where {@link EffectNeedsDecisionEvent}s go
	 * @param settings how it works
	 * @param observer what is told about scheduled and dispatched effects and drainer
	 * rounds
	 * @param observations where recordings and dispatch attempts are observed, and their
	 * trace context carried from one to the other
	 * @param runs the application's tick service, which fails the run of an intent
	 * resolved with {@link io.ductor.effect.EffectResolution#COMPENSATE}; {@code null}
	 * without runs
	 * @param threads where the drainer's and the notifier's threads come from
	 */
	public DurableEffects(DuctorDatabase database, EffectRegistry registry, JsonMapper jsonMapper,
			ApplicationEventPublisher events, Settings settings, DuctorObserver observer,
			DuctorObservations observations, Supplier<@Nullable TickService> runs, DuctorThreads threads) {
		DataSource dataSource = database.dataSource();
		this.settings = settings;
		this.events = events;
		this.recorder = new IntentRecorder(dataSource);
		this.claims = new IntentClaims(dataSource);
		this.outcomes = new IntentOutcomes(dataSource);
		this.reads = new IntentReads(dataSource);
		this.redrive = new IntentRedrive(dataSource);
		this.retention = new IntentRetention(dataSource);
		OperatorMoves moves = new OperatorMoves(dataSource);
		AlarmOccurrences occurrences = new AlarmOccurrences(dataSource);
		this.slots = new EffectSlots(dataSource, registry::concurrencyLimits);
		EffectPayloads payloads = new EffectPayloads(jsonMapper, settings.maxPayloadBytes());
		this.registry = registry;
		this.observer = observer;
		this.transactions = new TransactionTemplate(database.transactionManager());
		this.alarmStore = new RecurringAlarmStore(dataSource);
		this.recurring = new RecurringAlarms(this.alarmStore, registry, payloads, occurrences);
		this.dispatcher = new EffectDispatcher(registry, payloads, observer, settings.drainer().pollInterval(),
				settings.reconcile().backoff(), observations);
		this.drainer = new EffectDrainer(
				new DrainSession.Stores(this.claims, this.slots, this.outcomes, new DrainerLeases(dataSource)),
				this.dispatcher, this::settled, settings.drainer(), observer, threads);
		this.reconciliation = new EffectReconciliation(new ReconcileRounds(dataSource), registry, payloads, observer,
				new EffectReconciliation.Settings(settings.reconcile().maxRounds(), settings.reconcile().backoff(),
						settings.drainer().lease(), RECONCILE_BATCH_SIZE),
				observations);
		this.notifier = new CommitNotifier(this.recorder, this.drainer.instanceId(), notifyMode(settings), threads);
		this.writer = new EffectWriter(dataSource, this.recorder, payloads, this.notifier, this.drainer::wakeUp,
				settings.dispatchAtCommit() ? this::reserveAtCommit : () -> null, observer, observations);
		this.compensations = new Compensations(dataSource, registry, payloads, this.writer, this.recorder, this.reads,
				moves);
		this.outbox = new DefaultEffectOutbox(registry, this.writer, this.recorder, occurrences, this.compensations);
		this.operations = new DefaultEffectOperations(registry, this.reads, moves, occurrences, this.drainer::wakeUp,
				this.compensations, this.slots, runs);
		this.recurringAlarms = new DefaultRecurringAlarms(registry, this.writer, this.recurring);
		this.interceptor = new DurableEffectInterceptor(registry, this.writer, this.compensations);
	}

	/**
	 * @return the producer's API
	 */
	public EffectOutbox outbox() {
		return this.outbox;
	}

	/**
	 * @return the operator's API
	 */
	public EffectOperations operations() {
		return this.operations;
	}

	/**
	 * @return the recurring alarms declared in code
	 */
	public io.ductor.effect.RecurringAlarms recurringAlarms() {
		return this.recurringAlarms;
	}

	/**
	 * @return what records the compensations of a run, in the transaction of the tick
	 * that fails it: the tick service's {@link RunFailureHandler}
	 */
	public RunFailureHandler runFailureHandler() {
		return this.compensations;
	}

	/**
	 * @return the drainer; a lifecycle bean when draining is enabled in this instance
	 */
	public EffectDrainer drainer() {
		return this.drainer;
	}

	/**
	 * For tests with the drainer off: the drainer's and the reconciler's work, one step
	 * at a time on the calling thread.
	 * @return a drainer of its own, under a lease owner of its own
	 */
	public CallingThreadDrainer callingThreadDrainer() {
		return new CallingThreadDrainer(this.claims, this.outcomes, this.reads, this.redrive, this.dispatcher,
				this.registry, this.reconciliation, this::settled, this.settings.drainer().lease(),
				this.settings.reconcilerBatchSize());
	}

	/**
	 * For tests with the drainer off: intents due at commit are recorded leased to
	 * {@code drainer} and handed to it at commit, as they would be to the drainer (when
	 * dispatch at commit is on, which it is by default).
	 * @param drainer the calling-thread drainer, or {@code null} to stop
	 */
	public void dispatchAtCommitTo(CallingThreadDrainer drainer) {
		this.atCommit = drainer;
	}

	/**
	 * A place for an intent due at commit: in the drainer when it runs, else in the
	 * calling-thread drainer that took its place, if any.
	 */
	private Handoff reserveAtCommit() {
		if (this.drainer.isRunning()) {
			return this.drainer.reserve();
		}
		CallingThreadDrainer atCommit = this.atCommit;
		return (atCommit != null) ? atCommit.reserve() : null;
	}

	/**
	 * For tests: consult {@code faults} before every attempt, of the drainer and of
	 * {@link #callingThreadDrainer()}s, calls its effect.
	 * @param faults the faults, or {@code null} (or {@link DispatchFaults#NONE}) for none
	 */
	public void injectFaults(DispatchFaults faults) {
		this.dispatcher.injectFaults(faults);
	}

	/**
	 * @return the reconciler's task, for a {@code PeriodicWorker}
	 */
	public WorkerTask reconciler() {
		return new LeaseReconciler(this.redrive, this.settings.reconcilerBatchSize(), this::settled, this.registry,
				this.reconciliation);
	}

	/**
	 * @param batchSize the most due alarms one round handles
	 * @return the recurring-alarm scheduler's task, for a {@code PeriodicWorker}
	 */
	public WorkerTask alarmScheduler(int batchSize) {
		return new AlarmScheduler(this.alarmStore, this.recorder, this.registry, this.transactions,
				this::alarmsRecorded, this.observer, batchSize);
	}

	/**
	 * Declares the recurring alarms of the configuration, each in a transaction of its
	 * own, and deletes those declared in configuration earlier that {@code declared} no
	 * longer names.
	 * @param declared the alarms
	 * @throws DurableEffectException for an unknown effect or arguments that do not fit
	 * it, naming the property
	 */
	public void declareAlarms(List<RecurringAlarmDeclaration> declared) {
		this.recurring.declareAll(declared, this.transactions);
	}

	/**
	 * For tests that move Ductor's clock: every recurring alarm starts again from the
	 * database clock (its next occurrence the first after now, the finished occurrences
	 * after now forgotten), in a transaction of its own.
	 */
	public void restartRecurringAlarms() {
		this.transactions.executeWithoutResult((status) -> this.recurring.restartAtDatabaseClock());
	}

	private void alarmsRecorded() {
		this.drainer.wakeUp();
		this.recorder.notifyDrainersNow(this.drainer.instanceId());
	}

	/**
	 * @return the retention purger of effect intents
	 */
	public RetentionPurger retentionPurger() {
		return new EffectRetentionPurger(this.retention, this.settings.retention());
	}

	/**
	 * Wake the drainer when another instance commits an intent, and after the listener
	 * reconnects (notifications sent while it was away are lost).
	 * @param listener the application's notification listener
	 * @return the subscription
	 */
	public PostgresNotificationListener.Subscription wakeDrainerOnNotifications(PostgresNotificationListener listener) {
		return listener.subscribe(IntentRecorder.CHANNEL, new PostgresNotificationListener.NotificationHandler() {

			@Override
			public void notified(String payload) {
				if (!DurableEffects.this.drainer.instanceId().equals(payload)) {
					DurableEffects.this.drainer.wakeUp();
				}
			}

			@Override
			public void connected() {
				DurableEffects.this.drainer.wakeUp();
			}

		});
	}

	/** Stops the thread that sends notifications after commits. */
	@Override
	public void close() {
		this.notifier.close();
	}

	MethodInterceptor interceptor() {
		return this.interceptor;
	}

	private void settled(List<Settled> settled) {
		boolean due = false;
		for (Settled intent : settled) {
			if (intent.status() == EffectStatus.NEEDS_DECISION) {
				this.events.publishEvent(new EffectNeedsDecisionEvent(intent.id(), intent.effectName(), intent.key()));
			}
			due |= intent.status() == EffectStatus.PENDING;
		}
		if (due) {
			this.drainer.wakeUp();
		}
	}

	private static CommitNotifier.Mode notifyMode(Settings settings) {
		if (!settings.notifyOnCommit()) {
			return CommitNotifier.Mode.OFF;
		}
		return settings.notifyInTransaction() ? CommitNotifier.Mode.IN_TRANSACTION : CommitNotifier.Mode.AFTER_COMMIT;
	}

	/**
	 * How the feature works.
	 *
	 * @param notifyOnCommit whether a commit that recorded a due intent sends
	 * {@code pg_notify} to wake the drainers of other instances
	 * @param notifyInTransaction whether that notification is sent inside the committing
	 * transaction (delivered atomically with it, but PostgreSQL then commits notifying
	 * transactions one at a time) rather than right after the commit
	 * @param dispatchAtCommit whether an intent due at commit is recorded already leased
	 * to this instance's drainer, when it runs and has room, and handed to its workers
	 * right after the commit instead of being claimed
	 * @param maxPayloadBytes the largest argument payload, in bytes of JSON
	 * @param retention how long completed and cancelled intents are kept
	 * @param reconcilerBatchSize the most expired leases one reconciler round redrives
	 * @param drainer how the drainer works
	 * @param reconcile how unknown outcomes are reconciled
	 */
	public record Settings(boolean notifyOnCommit, boolean notifyInTransaction, boolean dispatchAtCommit,
			long maxPayloadBytes, Duration retention, int reconcilerBatchSize, EffectDrainer.Settings drainer,
			Reconcile reconcile) {
	}

	/**
	 * How the {@link EffectReconciler}s are asked about unknown outcomes.
	 *
	 * @param maxRounds how often a reconciler is asked about one attempt before a
	 * {@link Receiver#NOT_IDEMPOTENT} intent waits for a decision
	 * @param backoff the wait before the first round and between rounds
	 */
	public record Reconcile(int maxRounds, Backoff backoff) {
	}

}
