package io.ductor.effect.internal;

import java.time.OffsetDateTime;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Supplier;

import tools.jackson.databind.JsonNode;

import org.jspecify.annotations.Nullable;

import org.springframework.dao.DuplicateKeyException;

import io.ductor.effect.CompensationChain;
import io.ductor.effect.EffectConcurrency;
import io.ductor.effect.EffectIntent;
import io.ductor.effect.EffectIntentStateException;
import io.ductor.effect.EffectOperations;
import io.ductor.effect.EffectResolution;
import io.ductor.effect.EffectStatus;
import io.ductor.effect.OperatorDecision;
import io.ductor.internal.DbValues;
import io.ductor.internal.Ids;
import io.ductor.run.Run;
import io.ductor.run.RunStatus;
import io.ductor.run.TickOutcome;
import io.ductor.run.TickService;

/**
 * Ductor's {@link EffectOperations}: reads intents and moves them as an operator decides,
 * each move one conditional statement.
 */
public final class DefaultEffectOperations implements EffectOperations {

	private final EffectRegistry registry;

	private final IntentReads reads;

	private final OperatorMoves moves;

	private final AlarmOccurrences occurrences;

	private final LocalDrainer drainer;

	private final Compensations compensations;

	private final EffectSlots slots;

	private final Supplier<@Nullable TickService> ticks;

	public DefaultEffectOperations(EffectRegistry registry, IntentReads reads, OperatorMoves moves,
			AlarmOccurrences occurrences, LocalDrainer drainer, Compensations compensations, EffectSlots slots,
			Supplier<@Nullable TickService> ticks) {
		this.registry = registry;
		this.reads = reads;
		this.moves = moves;
		this.occurrences = occurrences;
		this.drainer = drainer;
		this.compensations = compensations;
		this.slots = slots;
		this.ticks = ticks;
	}

	@Override
	public Optional<EffectIntent> find(long id) {
		return this.reads.find(id);
	}

	@Override
	public Optional<EffectIntent> findByKey(String key) {
		return this.reads.findByKey(Ids.require("key", key));
	}

	@Override
	public List<EffectIntent> findByRun(String runId) {
		return this.reads.listByRun(Ids.require("runId", runId));
	}

	@Override
	public List<EffectIntent> list(EffectStatus status, long afterId, int limit) {
		Objects.requireNonNull(status, "status must not be null");
		if (limit < 1 || limit > 1000) {
			throw new IllegalArgumentException("limit must be between 1 and 1000 but was " + limit);
		}
		return this.reads.list(status, afterId, limit);
	}

	@Override
	public EffectIntent retry(long id, @Nullable OperatorDecision decision) {
		EffectIntent intent = require(id);
		EffectDefinition effect = this.registry.find(intent.effectName());
		int budget = (effect != null) ? effect.maxAttempts() : 1;
		return wake(move(id, List.of(EffectStatus.FAILED, EffectStatus.NEEDS_DECISION), EffectStatus.PENDING,
				"retried by an operator", intent.attempts() + budget, decision));
	}

	@Override
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
			this.drainer.wakeUp();
		}
		return total;
	}

	@Override
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

	@Override
	public EffectIntent cancel(long id, @Nullable OperatorDecision decision) {
		return wake(move(id,
				List.of(EffectStatus.PENDING, EffectStatus.RECONCILING, EffectStatus.FAILED,
						EffectStatus.NEEDS_DECISION),
				EffectStatus.CANCELLED, "cancelled by an operator", null, decision));
	}

	@Override
	public CompensationChain compensations(String runId) {
		return this.compensations.chain(Ids.require("runId", runId));
	}

	@Override
	public List<EffectConcurrency> concurrency() {
		return this.slots.concurrency();
	}

	@Override
	public Map<String, Integer> concurrencyLimits() {
		return this.slots.limits();
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
			throw new EffectIntentStateException("Intent " + id + " is " + DbValues.of(intent.status())
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
			return new EffectIntentStateException("Intent " + id + " is " + DbValues.of(current.status()) + "; only "
					+ from.stream().map(DbValues::of).toList() + " intents can become " + DbValues.of(to));
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
				+ "Intent " + id + " stays " + DbValues.of(intent.status()) + "; cancel it, or cancel the pending "
				+ "occurrence first to " + ((to == EffectStatus.PENDING) ? "run this one again" : "move this one"));
	}

	private EffectIntent wake(EffectIntent intent) {
		this.drainer.wakeUp();
		return intent;
	}

	private EffectIntent require(long id) {
		return this.reads.find(id).orElseThrow(() -> new EffectIntentStateException("No effect intent with id " + id));
	}

}
