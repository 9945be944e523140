package io.ductor.effect.internal;

import java.time.Duration;
import java.util.Optional;

import org.jspecify.annotations.Nullable;

import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import io.ductor.effect.EffectIntent;

/**
 * What {@code ductor-spring-boot-test} drives the feature with, built from the feature's
 * beans: calling-thread drainers, injected dispatch faults, dispatch at commit to a
 * calling-thread drainer and a restart of the recurring alarms at the database clock.
 */
public final class EffectTestSupport {

	private final IntentClaims claims;

	private final IntentOutcomes outcomes;

	private final IntentReads reads;

	private final IntentRedrive redrive;

	private final EffectDispatcher dispatcher;

	private final EffectRegistry registry;

	private final EffectReconciliation reconciliation;

	private final SettledIntents settled;

	private final LocalDrainer localDrainer;

	private final RecurringAlarms recurring;

	private final TransactionTemplate transactions;

	private final Duration lease;

	private final int batchSize;

	/**
	 * @param claims claims intents
	 * @param outcomes records outcomes
	 * @param reads reads intents
	 * @param redrive redrives expired leases
	 * @param dispatcher runs the effects
	 * @param registry the effects of the application
	 * @param reconciliation asks the reconcilers
	 * @param settled told about settled intents
	 * @param localDrainer this instance's drainer
	 * @param recurring the recurring alarms
	 * @param transactionManager the transaction manager of Ductor's own transactions
	 * @param lease how long a calling-thread drainer's claim lasts
	 * @param batchSize the most expired leases one reconciler step redrives
	 */
	public EffectTestSupport(IntentClaims claims, IntentOutcomes outcomes, IntentReads reads, IntentRedrive redrive,
			EffectDispatcher dispatcher, EffectRegistry registry, EffectReconciliation reconciliation,
			SettledIntents settled, LocalDrainer localDrainer, RecurringAlarms recurring,
			PlatformTransactionManager transactionManager, Duration lease, int batchSize) {
		this.claims = claims;
		this.outcomes = outcomes;
		this.reads = reads;
		this.redrive = redrive;
		this.dispatcher = dispatcher;
		this.registry = registry;
		this.reconciliation = reconciliation;
		this.settled = settled;
		this.localDrainer = localDrainer;
		this.recurring = recurring;
		this.transactions = new TransactionTemplate(transactionManager);
		this.lease = lease;
		this.batchSize = batchSize;
	}

	/**
	 * For tests with the drainer off: the drainer's and the reconciler's work, one step
	 * at a time on the calling thread.
	 * @return a drainer of its own, under a lease owner of its own
	 */
	public CallingThreadDrainer callingThreadDrainer() {
		return new CallingThreadDrainer(this.claims, this.outcomes, this.reads, this.redrive, this.dispatcher,
				this.registry, this.reconciliation, this.settled, this.lease, this.batchSize);
	}

	/**
	 * For tests with the drainer off: intents due at commit are recorded leased to
	 * {@code drainer} and handed to it at commit, as they would be to the drainer (when
	 * dispatch at commit is on, which it is by default).
	 * @param drainer the calling-thread drainer, or {@code null} to stop
	 */
	public void dispatchAtCommitTo(@Nullable CallingThreadDrainer drainer) {
		this.localDrainer.dispatchAtCommitTo(drainer);
	}

	/**
	 * For tests: consult {@code faults} before every attempt, of the drainer and of
	 * {@link #callingThreadDrainer()}s, calls its effect.
	 * @param faults the faults, or {@code null} (or {@link DispatchFaults#NONE}) for none
	 */
	public void injectFaults(@Nullable DispatchFaults faults) {
		this.dispatcher.injectFaults(faults);
	}

	/**
	 * For tests that move Ductor's clock: every recurring alarm starts again from the
	 * database clock (its next occurrence the first after now, the finished occurrences
	 * after now forgotten), in a transaction of its own.
	 */
	public void restartRecurringAlarms() {
		this.transactions.executeWithoutResult((status) -> this.recurring.restartAtDatabaseClock());
	}

	/**
	 * For tests: an intent as it is stored, read as the drainer reads it (not through the
	 * application's {@code EffectOperations}, which may be its own).
	 * @param id the intent's id
	 * @return the intent, if there is one
	 */
	public Optional<EffectIntent> find(long id) {
		return this.reads.find(id);
	}

}
