package io.ductor.effect;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;

import javax.sql.DataSource;

import org.springframework.context.expression.MethodBasedEvaluationContext;
import org.springframework.core.DefaultParameterNameDiscoverer;
import org.springframework.core.ParameterNameDiscoverer;
import org.springframework.expression.EvaluationException;
import org.springframework.expression.Expression;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

import io.ductor.Ids;
import io.ductor.metrics.DuctorObserver;
import io.ductor.run.Tick;

/**
 * Records effect intents in the caller's transaction: resolves the key, writes the payload, binds
 * the key to it, and arranges for the drainers to wake when the transaction commits.
 */
class EffectWriter {

	private static final ParameterNameDiscoverer parameterNames = new DefaultParameterNameDiscoverer();

	private final DataSource dataSource;

	private final IntentStore store;

	private final EffectPayloads payloads;

	private final CommitNotifier notifier;

	private final Runnable localWakeUp;

	private final DuctorObserver observer;

	EffectWriter(DataSource dataSource, IntentStore store, EffectPayloads payloads, CommitNotifier notifier,
			Runnable localWakeUp, DuctorObserver observer) {
		this.observer = observer;
		this.dataSource = dataSource;
		this.store = store;
		this.payloads = payloads;
		this.notifier = notifier;
		this.localWakeUp = localWakeUp;
	}

	/**
	 * Record one intent.
	 * @param effect the effect
	 * @param args the call's arguments
	 * @param key the idempotency key, or {@code null} to evaluate the effect's key expression
	 * @param orderingKey the ordering key, or {@code null} to evaluate the effect's expression
	 * @param delay the delay, or {@code null} for the effect's own
	 * @param alarmName the alarm this intent is an occurrence of, or {@code null}
	 * @return the intent's key
	 */
	String record(EffectDefinition effect, Object[] args, String key, String orderingKey, Duration delay,
			String alarmName) {
		return record(effect, args, key, orderingKey, delay, alarmName, Tick.current().map(Tick::runId).orElse(null));
	}

	/**
	 * Record one intent linked to {@code runId} whatever tick is current: a run's compensation.
	 * @return the intent's key
	 */
	String record(EffectDefinition effect, Object[] args, String key, String orderingKey, Duration delay,
			String alarmName, String runId) {
		requireTransaction(effect.name());
		String payload = this.payloads.write(effect, args);
		String resolvedKey = (key != null) ? key : evaluate(effect, effect.key(), "key", args);
		resolvedKey = (resolvedKey != null) ? requireKey("idempotency key", resolvedKey, effect)
				: UUID.randomUUID().toString();
		String ordering = (orderingKey != null) ? orderingKey : evaluate(effect, effect.orderingKey(), "orderingKey", args);
		if (ordering != null) {
			requireKey("ordering key", ordering, effect);
			// same-key writers commit one after the other, so id order is commit order
			this.store.lockUntilCommit("ductor.ordering:" + ordering);
		}
		Duration wait = (delay != null) ? delay : effect.delay();
		String fingerprint = EffectPayloads.fingerprint(effect.name(), payload);
		Optional<Long> id = this.store.insert(new IntentStore.NewIntent(effect.name(), resolvedKey, payload, fingerprint,
				effect.receiver(), effect.maxAttempts(), wait, ordering, alarmName, runId));
		if (id.isEmpty()) {
			String[] binding = this.store.keyBinding(resolvedKey).orElseThrow();
			if (!binding[1].equals(fingerprint)) {
				throw new IdempotencyKeyReuseException(resolvedKey, binding[0], effect.name());
			}
			return resolvedKey;
		}
		onCommit(effect.name(), wait.isZero());
		return resolvedKey;
	}

	void requireTransaction(String effectName) {
		if (!TransactionSynchronizationManager.isActualTransactionActive()
				|| !TransactionSynchronizationManager.hasResource(this.dataSource)) {
			throw new DurableEffectException("Effect '" + effectName + "' was called outside a transaction on "
					+ "Ductor's DataSource, so its intent could not be recorded atomically with the caller's work. "
					+ "Call it from a @Transactional method, a TransactionTemplate, or a TickService step.");
		}
		if (TransactionSynchronizationManager.isCurrentTransactionReadOnly()) {
			throw new DurableEffectException("Effect '" + effectName + "' was called inside a read-only transaction; "
					+ "recording an intent needs a read-write transaction");
		}
	}

	/**
	 * After the commit, wake the local drainer, count what was scheduled and, when an intent is
	 * due at once, have the drainers of other instances notified (once per transaction).
	 */
	private void onCommit(String effectName, boolean dueNow) {
		Scheduled scheduled = (Scheduled) TransactionSynchronizationManager.getResource(this);
		if (scheduled == null) {
			Scheduled fresh = new Scheduled();
			scheduled = fresh;
			TransactionSynchronizationManager.bindResource(this, fresh);
			TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {

				@Override
				public void afterCompletion(int status) {
					TransactionSynchronizationManager.unbindResourceIfPossible(EffectWriter.this);
					if (status == STATUS_COMMITTED) {
						fresh.effects.forEach(EffectWriter.this.observer::effectScheduled);
						EffectWriter.this.localWakeUp.run();
						if (fresh.dueNow) {
							EffectWriter.this.notifier.afterCommit();
						}
					}
				}

			});
		}
		if (dueNow && !scheduled.dueNow) {
			this.notifier.beforeCommit();
			scheduled.dueNow = true;
		}
		scheduled.effects.add(effectName);
	}

	/** What one transaction has recorded so far. */
	private static final class Scheduled {

		private final List<String> effects = new ArrayList<>();

		private boolean dueNow;

	}

	private static String evaluate(EffectDefinition effect, Expression expression, String attribute, Object[] args) {
		if (expression == null) {
			return null;
		}
		Method method = effect.method();
		Object value;
		try {
			value = expression.getValue(new MethodBasedEvaluationContext(null, method, args, parameterNames));
		}
		catch (EvaluationException ex) {
			throw new DurableEffectException("The " + attribute + " expression '" + expression.getExpressionString()
					+ "' of effect '" + effect.name() + "' failed: " + ex.getMessage(), ex);
		}
		if (value == null) {
			throw new DurableEffectException("The " + attribute + " expression '" + expression.getExpressionString()
					+ "' of effect '" + effect.name() + "' evaluated to null");
		}
		return value.toString();
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
