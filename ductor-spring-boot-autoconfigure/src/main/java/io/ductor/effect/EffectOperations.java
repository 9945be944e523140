package io.ductor.effect;

import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.jspecify.annotations.Nullable;

/**
 * The operator's side of the outbox: find and list intents, and act on them (retry,
 * resolve a {@code needs_decision} intent, cancel). The actuator endpoint and the console
 * call it; so can an application's own tools.
 */
public interface EffectOperations {

	/**
	 * @param id an intent id @return the intent, if it exists
	 */
	Optional<EffectIntent> find(long id);

	/**
	 * @param key an idempotency key @return its intent, if it exists
	 */
	Optional<EffectIntent> findByKey(String key);

	/**
	 * The intents recorded by the ticks of one run, oldest first.
	 * @param runId the run
	 * @return its intents
	 */
	List<EffectIntent> findByRun(String runId);

	/**
	 * A page of intents in one status, by id.
	 * @param status the status
	 * @param afterId the last id of the previous page, 0 for the first
	 * @param limit the page size, 1 to 1000
	 * @return the page
	 */
	List<EffectIntent> list(EffectStatus status, long afterId, int limit);

	/**
	 * Run a {@code failed} or {@code needs_decision} intent again, with the same key and
	 * a fresh budget of attempts. A retried alarm occurrence supersedes the alarm's other
	 * live occurrences, as a reschedule does: one still running may complete or fail, but
	 * is not retried beside it.
	 * @param id the intent
	 * @return the intent, now pending
	 * @throws EffectIntentStateException when the intent is in another status, or is an
	 * alarm occurrence whose alarm already has a pending occurrence (named in the
	 * message); nothing changed
	 */
	default EffectIntent retry(long id) {
		return retry(id, null);
	}

	/**
	 * {@link #retry(long)}, storing the operator's decision with the intent in the same
	 * statement.
	 * @param id the intent
	 * @param decision why and by whom, or {@code null}
	 * @return the intent, now pending
	 */
	EffectIntent retry(long id, @Nullable OperatorDecision decision);

	/**
	 * Run every {@code failed} (or {@code needs_decision}) intent of one effect again,
	 * each with a fresh budget of attempts, in batches. The call acts on the intents
	 * parked when it starts (by the database clock): an intent it moved that a drainer
	 * ran and parked again meanwhile is not moved a second time, so one call never runs
	 * an intent twice. An alarm occurrence whose alarm already has a pending occurrence
	 * stays parked, with the reason in its {@code last_error}; the others are retried.
	 * @param effectName the effect
	 * @param status {@link EffectStatus#FAILED} or {@link EffectStatus#NEEDS_DECISION}
	 * @return how many intents are pending again
	 */
	int retryAll(String effectName, EffectStatus status);

	/**
	 * Decide on an intent in {@code needs_decision}, or on one still {@code reconciling}
	 * without waiting for its reconciler (a round still running then changes nothing).
	 * @param id the intent
	 * @param resolution what the receiver did, or what to do
	 * @return the intent after the decision
	 * @throws EffectIntentStateException when the intent is not in {@code needs_decision}
	 * or {@code reconciling}, or a {@code RETRY} of an alarm occurrence whose alarm
	 * already has a pending occurrence (named in the message); nothing changed
	 */
	default EffectIntent resolve(long id, EffectResolution resolution) {
		return resolve(id, resolution, null);
	}

	/**
	 * {@link #resolve(long, EffectResolution)}, storing the operator's decision with the
	 * intent in the same statement.
	 * @param id the intent
	 * @param resolution what the receiver did, or what to do
	 * @param decision why and by whom, or {@code null}
	 * @return the intent after the decision
	 */
	EffectIntent resolve(long id, EffectResolution resolution, @Nullable OperatorDecision decision);

	/**
	 * Cancel an intent that has not run successfully and is not running.
	 * @param id the intent
	 * @return the intent, now cancelled
	 */
	default EffectIntent cancel(long id) {
		return cancel(id, null);
	}

	/**
	 * {@link #cancel(long)}, storing the operator's decision with the intent in the same
	 * statement.
	 * @param id the intent
	 * @param decision why and by whom, or {@code null}
	 * @return the intent, now cancelled
	 */
	EffectIntent cancel(long id, @Nullable OperatorDecision decision);

	/**
	 * The compensations a run's ticks registered, in the order they run if the run fails
	 * (the latest tick's first), each with the intent it undoes and, once recorded, its
	 * own intent.
	 * @param runId the run
	 * @return its compensation chain
	 */
	CompensationChain compensations(String runId);

	/**
	 * @return the concurrency limit of every limited effect, with the slots in use across
	 * all instances
	 */
	List<EffectConcurrency> concurrency();

	/**
	 * @return the concurrency limit of every limited effect, by name, without reading the
	 * database
	 */
	Map<String, Integer> concurrencyLimits();

}
