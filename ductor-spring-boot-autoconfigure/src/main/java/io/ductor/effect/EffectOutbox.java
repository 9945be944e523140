package io.ductor.effect;

import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import java.util.function.Supplier;

import tools.jackson.databind.JsonNode;

import org.jspecify.annotations.Nullable;

import org.springframework.dao.DuplicateKeyException;

import io.ductor.effect.internal.AlarmOccurrences;
import io.ductor.effect.internal.Compensations;
import io.ductor.effect.internal.EffectDefinition;
import io.ductor.effect.internal.EffectRegistry;
import io.ductor.effect.internal.EffectSlots;
import io.ductor.effect.internal.EffectWriter;
import io.ductor.effect.internal.IntentReads;
import io.ductor.effect.internal.IntentRecorder;
import io.ductor.effect.internal.OperatorMoves;
import io.ductor.effect.internal.RecurringAlarms;
import io.ductor.internal.Ids;
import io.ductor.run.Run;
import io.ductor.run.RunStatus;
import io.ductor.run.TickOutcome;
import io.ductor.run.TickService;

/**
 * The outbox, programmatically: schedule effects and named alarms inside the caller's
 * transaction, and act on intents as an operator (find, retry, resolve, cancel).
 */
public class EffectOutbox {

	private final EffectRegistry registry;

	private final EffectWriter writer;

	private final IntentRecorder recorder;

	private final IntentReads reads;

	private final OperatorMoves moves;

	private final AlarmOccurrences occurrences;

	private final Runnable wakeUp;

	private final Compensations compensations;

	private final Supplier<TickService> ticks;

	private final RecurringAlarms recurring;

	private final EffectSlots slots;

	/**
	 * Created by auto-configuration, which owns the parts; applications inject the bean.
	 * @param registry the declared effects
	 * @param writer records intents
	 * @param recorder records intents and takes their locks
	 * @param reads reads intents
	 * @param moves moves intents as an operator
	 * @param occurrences the intents that are occurrences of alarms
	 * @param wakeUp wakes the drainer
	 * @param compensations records compensations
	 * @param recurring the recurring alarms
	 * @param slots the concurrency slots
	 * @param ticks the tick service that fails compensated runs, once there is one
	 */
	public EffectOutbox(EffectRegistry registry, EffectWriter writer, IntentRecorder recorder, IntentReads reads,
			OperatorMoves moves, AlarmOccurrences occurrences, Runnable wakeUp, Compensations compensations,
			RecurringAlarms recurring, EffectSlots slots, Supplier<@Nullable TickService> ticks) {
		this.registry = registry;
		this.writer = writer;
		this.recorder = recorder;
		this.reads = reads;
		this.moves = moves;
		this.occurrences = occurrences;
		this.wakeUp = wakeUp;
		this.compensations = compensations;
		this.recurring = recurring;
		this.slots = slots;
		this.ticks = ticks;
	}

	/**
	 * Declare a recurring alarm, or change one, in the caller's transaction. Each
	 * occurrence is an ordinary intent whose idempotency key is the alarm's name and the
	 * occurrence's instant ({@link RecurringAlarm#occurrenceKey}), recorded when it is
	 * due by whichever instance's scheduler gets there first; forward
	 * {@link EffectContext#idempotencyKey()} to the receiver. Declaring an alarm again
	 * with the same schedule keeps its next occurrence; with another schedule, it starts
	 * with the first occurrence after now. A paused alarm stays paused.
	 * @param alarmName the alarm's name, an identifier of at most 200 characters
	 * @param schedule when it fires and what happens to missed occurrences
	 * @param request the effect and its arguments; it must not carry a key, an ordering
	 * key or a delay
	 * @return the instant of its next occurrence
	 */
	public Instant scheduleRecurring(String alarmName, AlarmSchedule schedule, EffectRequest request) {
		Ids.require("alarmName", alarmName);
		Objects.requireNonNull(schedule, "schedule must not be null");
		if (request.key() != null || request.orderingKey() != null || request.delay() != null) {
			throw new IllegalArgumentException("A recurring alarm's occurrences are keyed by their instant and due at "
					+ "it; do not set a key, an ordering key or a delay on the request");
		}
		EffectDefinition effect = effect(request.effectName());
		this.writer.requireTransaction("recurring alarm '" + alarmName + "'");
		holdRecurring(alarmName);
		return recurring().declare(alarmName, schedule, effect, request.args().toArray(), RecurringAlarms.API);
	}

	/**
	 * Pause a recurring alarm in the caller's transaction: no occurrence is recorded
	 * until it is resumed.
	 * @param alarmName the alarm
	 * @return whether it exists
	 */
	public boolean pauseRecurring(String alarmName) {
		return pauseRecurring(alarmName, null);
	}

	/**
	 * {@link #pauseRecurring(String)}, storing the operator's decision with the alarm in
	 * the same statement ({@code decision_reason}, {@code decided_by},
	 * {@code decided_at}).
	 * @param alarmName the alarm
	 * @param decision why and by whom, or {@code null}
	 * @return whether it exists
	 */
	public boolean pauseRecurring(String alarmName, @Nullable OperatorDecision decision) {
		this.writer.requireTransaction("recurring alarm '" + alarmName + "'");
		holdRecurring(alarmName);
		return recurring().pause(alarmName, decision);
	}

	/**
	 * Resume a paused recurring alarm in the caller's transaction, with its first
	 * occurrence after now (by the database clock): the occurrences of the pause are not
	 * made up.
	 * @param alarmName the alarm
	 * @return whether it exists
	 */
	public boolean resumeRecurring(String alarmName) {
		return resumeRecurring(alarmName, null);
	}

	/**
	 * {@link #resumeRecurring(String)}, storing the operator's decision with the alarm in
	 * the same statement when it was paused (resuming an alarm that runs changes
	 * nothing).
	 * @param alarmName the alarm
	 * @param decision why and by whom, or {@code null}
	 * @return whether it exists
	 */
	public boolean resumeRecurring(String alarmName, @Nullable OperatorDecision decision) {
		this.writer.requireTransaction("recurring alarm '" + alarmName + "'");
		holdRecurring(alarmName);
		return recurring().resume(alarmName, decision);
	}

	/**
	 * Delete a recurring alarm in the caller's transaction. Occurrences already recorded
	 * still run; cancel them as intents if they must not. An alarm declared in properties
	 * is declared again at the next start-up unless it is removed from them.
	 * @param alarmName the alarm
	 * @return whether it existed
	 */
	public boolean cancelRecurring(String alarmName) {
		this.writer.requireTransaction("recurring alarm '" + alarmName + "'");
		holdRecurring(alarmName);
		return recurring().cancel(alarmName);
	}

	/**
	 * @return every recurring alarm, by name, with its next and last occurrence
	 */
	public List<RecurringAlarm> recurringAlarms() {
		return recurring().list();
	}

	/**
	 * @return the concurrency limit of every limited effect, with the slots in use across
	 * all instances
	 */
	public List<EffectConcurrency> concurrency() {
		EffectSlots known = this.slots;
		if (known == null) {
			return List.of();
		}
		Map<String, Integer> used = known.inUse();
		return known.limits()
			.entrySet()
			.stream()
			.map((limit) -> new EffectConcurrency(limit.getKey(), limit.getValue(),
					used.getOrDefault(limit.getKey(), 0)))
			.toList();
	}

	/**
	 * @return the concurrency limit of every limited effect, by name, without reading the
	 * database
	 */
	public Map<String, Integer> concurrencyLimits() {
		EffectSlots known = this.slots;
		return (known != null) ? known.limits() : Map.of();
	}

	/** Takes the alarm's lock until the caller's transaction completes. */
	private void holdAlarm(String alarmName) {
		this.writer.holdUntilCommit("ductor.alarm:" + alarmName, "Alarm '" + alarmName + "'",
				"Schedule or cancel it in the outer transaction, or after it commits.");
		this.recorder.lockUntilCommit("ductor.alarm:" + alarmName);
	}

	/**
	 * Notes that the caller's transaction holds the recurring alarm's row until it
	 * completes.
	 */
	private void holdRecurring(String alarmName) {
		Ids.require("alarmName", alarmName);
		this.writer.holdUntilCommit("ductor.recurring:" + alarmName, "Recurring alarm '" + alarmName + "'",
				"Change it in the outer transaction, or after it commits.");
	}

	private RecurringAlarms recurring() {
		RecurringAlarms alarms = this.recurring;
		if (alarms == null) {
			throw new IllegalStateException("Recurring alarms are not available in this outbox");
		}
		return alarms;
	}

	/**
	 * Record a call of an effect in the caller's transaction, as calling the annotated
	 * method would.
	 * @param request the effect, its arguments and options
	 * @return the intent's idempotency key
	 * @throws DurableEffectException without a transaction, for an unknown effect or
	 * unstorable arguments
	 * @throws io.ductor.IdempotencyKeyReuseException when the key is bound to another
	 * payload
	 */
	public String schedule(EffectRequest request) {
		EffectDefinition effect = effect(request.effectName());
		Object[] args = request.args().toArray();
		String key = this.writer.record(effect, args, request.key(), request.orderingKey(), request.delay(), null);
		if (request.compensation() != null) {
			this.compensations.register(key, request.compensation(), true);
		}
		else {
			this.compensations.registerDeclared(effect, args, key);
		}
		return key;
	}

	/**
	 * Register, in the current tick, the compensation of an intent the tick records (or
	 * recorded) with {@code key}: for an effect called through its annotated method whose
	 * undo takes other arguments than the effect. The first compensation registered for a
	 * key in a run wins.
	 * @param key the idempotency key of the intent to undo if the run fails
	 * @param compensation the effect and arguments that undo it
	 * @throws DurableEffectException outside a tick of a run, or for an unknown effect
	 */
	public void compensateWith(String key, EffectRequest compensation) {
		Ids.require("key", key);
		Objects.requireNonNull(compensation, "compensation must not be null");
		this.writer.requireTransaction(compensation.effectName());
		this.compensations.register(key, compensation, true);
	}

	/**
	 * The compensations a run's ticks registered, in the order they run if the run fails
	 * (the latest tick's first), each with the intent it undoes and, once recorded, its
	 * own intent.
	 * @param runId the run
	 * @return its compensation chain
	 */
	public CompensationChain compensations(String runId) {
		return this.compensations.chain(Ids.require("runId", runId));
	}

	/**
	 * Schedule the next occurrence of a named alarm in the caller's transaction: its
	 * pending occurrence, if any, is cancelled and a new one with a new idempotency key
	 * is recorded. An occurrence that is running meanwhile may still complete or fail,
	 * but it never goes back to pending beside the new one: an attempt that would be
	 * retried is cancelled instead ("superseded by a rescheduled occurrence"). Its row
	 * stays locked until the caller commits, so keep the transaction short. Forward the
	 * occurrence's {@link EffectContext#idempotencyKey()}, not the alarm name.
	 * @param alarmName the alarm's name, an identifier of at most 200 characters
	 * @param delay when the occurrence is due, from the commit
	 * @param request the effect and its arguments; it must not carry a key
	 * @return the new occurrence's idempotency key
	 */
	public String scheduleAlarm(String alarmName, Duration delay, EffectRequest request) {
		Ids.require("alarmName", alarmName);
		Objects.requireNonNull(delay, "delay must not be null");
		if (request.key() != null) {
			throw new IllegalArgumentException(
					"An alarm occurrence gets a new key each time it is scheduled; " + "do not set one on the request");
		}
		EffectDefinition effect = effect(request.effectName());
		this.writer.requireTransaction(effect.name());
		holdAlarm(alarmName);
		this.occurrences.supersedeAlarm(alarmName);
		String key = "alarm:" + alarmName + ":" + UUID.randomUUID();
		return this.writer.record(effect, request.args().toArray(), key, request.orderingKey(), delay, alarmName);
	}

	/**
	 * Cancel the pending occurrence of a named alarm, in the caller's transaction. A
	 * running occurrence may still complete or fail, but is not retried.
	 * @param alarmName the alarm's name
	 * @return whether a pending occurrence was cancelled
	 */
	public boolean cancelAlarm(String alarmName) {
		Ids.require("alarmName", alarmName);
		this.writer.requireTransaction("alarm '" + alarmName + "'");
		holdAlarm(alarmName);
		return this.occurrences.supersedeAlarm(alarmName) > 0;
	}

	/**
	 * @param id an intent id @return the intent, if it exists
	 */
	public Optional<EffectIntent> find(long id) {
		return this.reads.find(id);
	}

	/**
	 * @param key an idempotency key @return its intent, if it exists
	 */
	public Optional<EffectIntent> findByKey(String key) {
		return this.reads.findByKey(Ids.require("key", key));
	}

	/**
	 * The intents recorded by the ticks of one run, oldest first.
	 * @param runId the run
	 * @return its intents
	 */
	public List<EffectIntent> findByRun(String runId) {
		return this.reads.listByRun(Ids.require("runId", runId));
	}

	/**
	 * A page of intents in one status, by id.
	 * @param status the status
	 * @param afterId the last id of the previous page, 0 for the first
	 * @param limit the page size, 1 to 1000
	 * @return the page
	 */
	public List<EffectIntent> list(EffectStatus status, long afterId, int limit) {
		Objects.requireNonNull(status, "status must not be null");
		if (limit < 1 || limit > 1000) {
			throw new IllegalArgumentException("limit must be between 1 and 1000 but was " + limit);
		}
		return this.reads.list(status, afterId, limit);
	}

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
	public EffectIntent retry(long id) {
		return retry(id, null);
	}

	/**
	 * {@link #retry(long)}, storing the operator's decision with the intent in the same
	 * statement.
	 * @param id the intent
	 * @param decision why and by whom, or {@code null}
	 * @return the intent, now pending
	 */
	public EffectIntent retry(long id, @Nullable OperatorDecision decision) {
		EffectIntent intent = require(id);
		EffectDefinition effect = this.registry.find(intent.effectName());
		int budget = (effect != null) ? effect.maxAttempts() : 1;
		return wake(move(id, List.of(EffectStatus.FAILED, EffectStatus.NEEDS_DECISION), EffectStatus.PENDING,
				"retried by an operator", intent.attempts() + budget, decision));
	}

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
	public int retryAll(String effectName, EffectStatus status) {
		Ids.require("effectName", effectName);
		if (status != EffectStatus.FAILED && status != EffectStatus.NEEDS_DECISION) {
			throw new IllegalArgumentException("only failed or needs_decision intents can be retried, not " + status);
		}
		EffectDefinition effect = this.registry.find(effectName);
		int budget = (effect != null) ? effect.maxAttempts() : 1;
		OffsetDateTime asOf = this.reads.databaseNow();
		int total = 0;
		for (int moved = -1; moved != 0; total += moved) {
			moved = this.moves.retryBatch(effectName, status, budget, 500, asOf);
		}
		if (total > 0) {
			this.wakeUp.run();
		}
		return total;
	}

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
	public EffectIntent resolve(long id, EffectResolution resolution) {
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
	public EffectIntent resolve(long id, EffectResolution resolution, @Nullable OperatorDecision decision) {
		Objects.requireNonNull(resolution, "resolution must not be null");
		List<EffectStatus> from = List.of(EffectStatus.NEEDS_DECISION, EffectStatus.RECONCILING);
		return switch (resolution) {
			case RETRY -> wake(move(id, from, EffectStatus.PENDING, "resolved: retry with the same key",
					require(id).attempts() + 1, decision));
			case MARK_DONE ->
				move(id, from, EffectStatus.COMPLETED, "resolved: marked done by an operator", null, decision);
			case MARK_FAILED ->
				move(id, from, EffectStatus.FAILED, "resolved: marked failed by an operator", null, decision);
			case COMPENSATE -> compensate(id, decision);
		};
	}

	/**
	 * Cancels a parked intent and fails its run, recording the run's compensations:
	 * through a tick (stamp {@code "compensate:" + id}) for an active run, so that the
	 * cancel, the failure and the compensations commit together; for a run that already
	 * failed, the compensations still missing (this intent's, when it registered one)
	 * first, then the cancel. Should the cancel then not happen, the compensation of this
	 * intent waits for it, and deciding again records nothing twice.
	 */
	private EffectIntent compensate(long id, @Nullable OperatorDecision decision) {
		EffectIntent intent = require(id);
		if (intent.status() != EffectStatus.NEEDS_DECISION) {
			throw new EffectIntentStateException("Intent " + id + " is " + intent.status().dbValue()
					+ "; only [needs_decision] intents can be compensated");
		}
		if (intent.runId() == null) {
			throw new EffectIntentStateException("Intent " + id + " was not recorded by a tick of a run, so there "
					+ "is no run to compensate; resolve it with RETRY, MARK_DONE or MARK_FAILED");
		}
		TickService runs = this.ticks.get();
		if (runs == null) {
			throw new EffectIntentStateException(
					"Runs are not available in this application, so intent " + id + " cannot be compensated");
		}
		String note = "resolved: compensate (run " + intent.runId() + " failed by an operator's decision)";
		Run<JsonNode> run = runs.find(intent.runId(), JsonNode.class)
			.orElseThrow(() -> new EffectIntentStateException(
					"Run '" + intent.runId() + "' of intent " + id + " no longer exists"));
		if (run.status() == RunStatus.ACTIVE) {
			TickOutcome<JsonNode> outcome = runs.tick(intent.runId(), Compensations.PREFIX + id, JsonNode.class,
					(state, tick) -> {
						move(id, List.of(EffectStatus.NEEDS_DECISION), EffectStatus.CANCELLED, note, null, decision);
						tick.fail("intent " + id + " (" + intent.effectName() + ", key '" + intent.idempotencyKey()
								+ "') had an unknown outcome; an operator decided to compensate the run");
						return state;
					});
			if (outcome.applied()) {
				return wake(require(id));
			}
			run = runs.find(intent.runId(), JsonNode.class).orElseThrow();
		}
		if (run.status() != RunStatus.FAILED) {
			throw new EffectIntentStateException("Run '" + run.id() + "' of intent " + id + " is "
					+ run.status().name().toLowerCase(java.util.Locale.ROOT)
					+ ": only an active or failed run is compensated; resolve it with RETRY, MARK_DONE or MARK_FAILED");
		}
		runs.compensateFailedRun(run.id());
		return wake(move(id, List.of(EffectStatus.NEEDS_DECISION), EffectStatus.CANCELLED, note, null, decision));
	}

	/**
	 * Cancel an intent that has not run successfully and is not running.
	 * @param id the intent
	 * @return the intent, now cancelled
	 */
	public EffectIntent cancel(long id) {
		return cancel(id, null);
	}

	/**
	 * {@link #cancel(long)}, storing the operator's decision with the intent in the same
	 * statement.
	 * @param id the intent
	 * @param decision why and by whom, or {@code null}
	 * @return the intent, now cancelled
	 */
	public EffectIntent cancel(long id, @Nullable OperatorDecision decision) {
		return wake(move(id,
				List.of(EffectStatus.PENDING, EffectStatus.RECONCILING, EffectStatus.FAILED,
						EffectStatus.NEEDS_DECISION),
				EffectStatus.CANCELLED, "cancelled by an operator", null, decision));
	}

	private EffectIntent move(long id, List<EffectStatus> from, EffectStatus to, String note, Integer maxAttempts,
			@Nullable OperatorDecision decision) {
		Optional<EffectIntent> moved;
		try {
			moved = this.moves.transition(id, from, to, note, maxAttempts, decision);
		}
		catch (DuplicateKeyException ex) {
			throw alarmRefusal(id, to, ex);
		}
		return moved.orElseThrow(() -> {
			EffectIntent current = require(id);
			return new EffectIntentStateException("Intent " + id + " is " + current.status().dbValue() + "; only "
					+ from.stream().map(EffectStatus::dbValue).toList() + " intents can become " + to.dbValue());
		});
	}

	/**
	 * Why the move of an alarm occurrence broke the alarm's one-pending-occurrence index,
	 * naming the pending occurrence; {@code ex} itself for any other duplicate key.
	 */
	private RuntimeException alarmRefusal(long id, EffectStatus to, DuplicateKeyException ex) {
		EffectIntent intent = require(id);
		if (intent.alarmName() == null) {
			return ex;
		}
		String newer = this.occurrences.pendingOccurrence(intent.alarmName())
			.map((pending) -> "intent " + pending.id() + " (key '" + pending.idempotencyKey() + "')")
			.orElse("another occurrence");
		return new EffectIntentStateException("Intent " + id + " is an occurrence of alarm '" + intent.alarmName()
				+ "', which was rescheduled: " + newer + " is its pending occurrence, and an alarm has at most one. "
				+ "Intent " + id + " stays " + intent.status().dbValue() + "; cancel it, or cancel the pending "
				+ "occurrence first to " + ((to == EffectStatus.PENDING) ? "run this one again" : "move this one"));
	}

	private EffectIntent wake(EffectIntent intent) {
		this.wakeUp.run();
		return intent;
	}

	private EffectIntent require(long id) {
		return this.reads.find(id).orElseThrow(() -> new EffectIntentStateException("No effect intent with id " + id));
	}

	private EffectDefinition effect(String name) {
		EffectDefinition effect = this.registry.find(Ids.require("effectName", name));
		if (effect == null) {
			throw new DurableEffectException("No @DurableEffect named '" + name + "' in this application");
		}
		return effect;
	}

}
