package io.ductor.effect.internal;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.UUID;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.aop.support.AopUtils;

import io.ductor.effect.EffectContext;
import io.ductor.effect.Receiver;
import io.ductor.effect.ReconcileOutcome;
import io.ductor.effect.internal.EffectMethods.ReconcilerMethod;
import io.ductor.effect.internal.ReconcileRounds.ReconcileClaim;
import io.ductor.metrics.internal.DuctorObserver;
import io.ductor.observation.internal.DuctorMdc;
import io.ductor.observation.internal.DuctorInstrumentation;
import io.ductor.observation.internal.DuctorObservations;
import io.ductor.worker.internal.Backoff;

/**
 * Asks the {@link EffectReconciler}s about the intents in {@code reconciling}: claims due
 * rounds under a lease (the round is counted in the claim), calls each reconciler outside
 * any transaction, and records its answer with an update fenced by lease owner and round.
 * A crash during a round leaves the intent in {@code reconciling}; once the round's lease
 * expires it is claimed again and asked again, never dispatched blindly.
 * <p>
 * Each round is observed ({@code ductor.effect.reconcile}) as a continuation of the trace
 * context stored with the intent, as its attempts are, and the MDC names the intent while
 * the reconciler runs.
 */
public final class EffectReconciliation {

	private static final Log logger = LogFactory.getLog(EffectReconciliation.class);

	private final ReconcileRounds rounds;

	private final EffectRegistry registry;

	private final EffectPayloads payloads;

	private final DuctorObserver observer;

	private final Settings settings;

	private final DuctorObservations observations;

	private final String owner = "reconciler/" + UUID.randomUUID();

	public EffectReconciliation(ReconcileRounds rounds, EffectRegistry registry, EffectPayloads payloads,
			DuctorInstrumentation instrumentation, Settings settings) {
		this.observations = instrumentation.observations();
		this.rounds = rounds;
		this.registry = registry;
		this.payloads = payloads;
		this.observer = instrumentation.metrics();
		this.settings = settings;
	}

	/**
	 * One batch of due rounds.
	 * @param settledListener told about the intents whose status changed
	 * @return whether the batch was full: more rounds may be due
	 */
	boolean reconcileDue(java.util.function.Consumer<List<Settled>> settledListener) {
		return reconcileDueCounted(settledListener) == this.settings.batchSize();
	}

	/**
	 * One batch of due rounds.
	 * @param settledListener told about the intents whose status changed
	 * @return how many rounds were claimed
	 */
	int reconcileDueCounted(java.util.function.Consumer<List<Settled>> settledListener) {
		List<ReconcileClaim> claims = this.rounds.claimReconciling(this.owner, this.settings.lease(),
				this.settings.batchSize());
		List<Settled> settled = new ArrayList<>();
		for (ReconcileClaim claim : claims) {
			try {
				settle(claim).ifPresent(settled::add);
			}
			catch (RuntimeException ex) {
				logger.warn("Ductor could not record reconciliation round " + claim.round() + " of intent " + claim.id()
						+ " of effect '" + claim.effectName()
						+ "'; it is reconciled again when the round's lease expires", ex);
			}
		}
		if (!settled.isEmpty()) {
			settledListener.accept(settled);
		}
		return claims.size();
	}

	/** One round, observed in the intent's stored trace, the MDC naming the intent. */
	private java.util.Optional<Settled> settle(ReconcileClaim claim) {
		DuctorMdc.Restore mdc = DuctorMdc.attempt(claim.id(), claim.effectName(), claim.key(), claim.runId(),
				claim.attempt());
		DuctorObservations.Scope scope = this.observations.reconcile(new DuctorObservations.Attempt(claim.id(),
				claim.effectName(), claim.receiver().name(), claim.key(), claim.attempt(), claim.runId()),
				claim.round(), TraceContexts.decode(claim.traceContext()));
		try {
			return settle(claim, scope);
		}
		catch (RuntimeException ex) {
			scope.outcome("error");
			scope.error(ex);
			throw ex;
		}
		finally {
			scope.close();
			mdc.close();
		}
	}

	private java.util.Optional<Settled> settle(ReconcileClaim claim, DuctorObservations.Scope scope) {
		ReconcilerMethod reconciler = this.registry.reconciler(claim.effectName());
		if (reconciler == null) {
			scope.outcome("no_reconciler");
			return decide(claim, null, "FAILED", "the effect has no @EffectReconciler in this application any more");
		}
		ReconcileOutcome outcome;
		try {
			outcome = ask(reconciler, claim);
		}
		catch (Throwable ex) {
			Throwable failure = (ex instanceof InvocationTargetException target) ? target.getTargetException() : ex;
			logger.warn("The reconciler of effect '" + claim.effectName() + "' failed on round " + claim.round()
					+ " for intent " + claim.id(), failure);
			this.observer.effectReconciled(claim.effectName(), "failed");
			scope.outcome("failed");
			scope.error(failure);
			return decide(claim, null, "FAILED", "the reconciler threw " + failure.getClass().getName()
					+ ((failure.getMessage() != null) ? ": " + failure.getMessage() : ""));
		}
		if (outcome == null) {
			outcome = ReconcileOutcome.UNKNOWN;
		}
		String answer = outcome.name().toLowerCase(Locale.ROOT);
		this.observer.effectReconciled(claim.effectName(), answer);
		scope.outcome(answer);
		return decide(claim, outcome, outcome.name(), "the reconciler answered " + outcome);
	}

	private java.util.Optional<Settled> decide(ReconcileClaim claim, ReconcileOutcome outcome, String stored,
			String answer) {
		String round = " (reconcile round " + claim.round() + " of attempt " + claim.attempt() + ")";
		if (outcome == ReconcileOutcome.APPLIED) {
			return this.rounds.settleReconciling(this.owner, claim, "complete", stored,
					"Reconciled: the receiver applied the attempt" + round, null);
		}
		if (outcome == ReconcileOutcome.NOT_APPLIED) {
			return this.rounds.settleReconciling(this.owner, claim, "retry", stored,
					"Reconciled: the receiver did not apply the attempt, retried with the same key" + round, null);
		}
		if (claim.round() < this.settings.maxRounds()) {
			return this.rounds.settleReconciling(this.owner, claim, "again", stored, null,
					this.settings.backoff().delay(claim.round()));
		}
		if (claim.receiver() == Receiver.IDEMPOTENT) {
			// its receiver deduplicates: what it would have had without a reconciler
			return this.rounds
				.settleReconciling(
						this.owner, claim, "retry", stored, "Not reconciled after " + claim.round() + " round(s), "
								+ answer + "; retried with the same key, which the receiver " + "deduplicates" + round,
						null);
		}
		return this.rounds.settleReconciling(this.owner, claim, "park", stored,
				"Outcome unknown after attempt " + claim.attempt() + " at a receiver that cannot deduplicate, and not "
						+ "reconciled after " + claim.round() + " round(s) (last: " + answer + "); not retried "
						+ "automatically",
				null);
	}

	private ReconcileOutcome ask(ReconcilerMethod reconciler, ReconcileClaim claim) throws Exception {
		Method method = reconciler.method();
		Object[] arguments = new Object[method.getParameterCount()];
		arguments[0] = (method.getParameterTypes()[0] == EffectContext.class)
				? new EffectContext(claim.id(), claim.effectName(), claim.key(), claim.attempt(), claim.dueAt())
				: claim.key();
		if (EffectRegistry.takesArguments(reconciler)) {
			EffectDefinition effect = this.registry.find(claim.effectName());
			if (effect == null) {
				throw new IllegalStateException(
						"effect '" + claim.effectName() + "' does not exist in this application");
			}
			Object[] stored = this.payloads.read(effect, claim.payloadJson());
			System.arraycopy(stored, 0, arguments, 1, stored.length);
		}
		Object bean = this.registry.reconcilerBean(reconciler);
		return (ReconcileOutcome) AopUtils.selectInvocableMethod(method, bean.getClass()).invoke(bean, arguments);
	}

	/**
	 * How reconciliation works.
	 *
	 * @param maxRounds how often an unknown outcome is asked about before it waits for a
	 * decision
	 * @param backoff the wait between rounds
	 * @param lease how long a round is held before another may take it over
	 * @param batchSize the most rounds one claim takes
	 */
	public record Settings(int maxRounds, Backoff backoff, Duration lease, int batchSize) {
	}

}
