package io.ductor.actuate.internal;

import java.time.Duration;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.function.Supplier;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;
import org.springframework.boot.actuate.endpoint.SecurityContext;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;
import org.springframework.transaction.support.TransactionOperations;

import io.ductor.effect.AlarmSchedule;
import io.ductor.effect.CompensationChain;
import io.ductor.effect.EffectIntent;
import io.ductor.effect.EffectIntentStateException;
import io.ductor.effect.EffectOperations;
import io.ductor.effect.EffectResolution;
import io.ductor.effect.EffectStatus;
import io.ductor.effect.OperatorDecision;
import io.ductor.effect.RecurringAlarm;
import io.ductor.effect.RecurringAlarms;
import io.ductor.idempotency.IdempotentRequest;
import io.ductor.idempotency.web.Idempotent;
import io.ductor.internal.DbValues;
import io.ductor.metrics.internal.DuctorBacklog;
import io.ductor.worker.internal.WorkerStatus;

/**
 * The {@code ductor} actuator endpoint. Read: an overview of the backlog and the workers
 * ({@code GET /actuator/ductor}), with the recurring alarms (next occurrence, last
 * occurrence and its outcome) and the concurrency limits (slots in use across all
 * instances); intents by status with paging ({@code GET
 * /actuator/ductor/{status}?afterId=&limit=}, status {@code all} for every status),
 * filtered by {@code effect}, {@code key}, {@code run} and a creation time range
 * ({@code from}, {@code to}, ISO-8601); a run's compensation chain, with its state,
 * transitions and effects ({@code GET /actuator/ductor/runs/{runId}}); one intent with
 * its operator decision ({@code GET /actuator/ductor/intents/{id}}); runs of a type
 * ({@code GET /actuator/ductor/run-types/{type}?status=&after=}); the recurring alarms
 * and the named one-shot alarms by name, each with its next and last occurrence
 * ({@code GET /actuator/ductor/alarms/recurring?after=&prefix=&limit=}, {@code GET
 * /actuator/ductor/alarms/one-shot?after=&prefix=&limit=}); the concurrency slots of the
 * limited effects with the intents holding them ({@code GET /actuator/ductor/slots}); an
 * idempotency key ({@code GET /actuator/ductor/keys?key=&tenant=&pool=}, any key, or
 * {@code GET /actuator/ductor/keys/{key}?tenant=&pool=} for one that can be a path
 * segment; the pool of {@code @Idempotent} handlers when none is named), its stored body
 * as text or, when binary, as base64. Write: act on one intent ({@code POST
 * /actuator/ductor/{id}} with {@code action} = {@code retry}, {@code cancel} or
 * {@code resolve} and a {@code resolution}, and a {@code reason}), or act on every failed
 * or undecided intent of an effect ({@code POST /actuator/ductor} with {@code effect},
 * {@code status}, and optionally {@code action}, {@code resolution} and {@code reason});
 * pause or resume a recurring alarm ({@code POST /actuator/ductor/alarms/pause} or
 * {@code …/resume} with its {@code name} and a {@code reason}). Every write is logged;
 * with a {@code reason}, the reason, who (the authenticated principal, or
 * {@code anonymous}) and when are stored with each intent moved and each alarm paused or
 * resumed.
 * <p>
 * Every text the caller sends (action, resolution, reason, effect, status, filters) is at
 * most {@value #MAX_TEXT_LENGTH} characters (an idempotency key looked up: at most 255)
 * without control characters or line separators, so that what reaches the audit line is
 * one line the caller cannot forge; anything else is refused with a 400 naming the field,
 * before anything is read or changed. For {@code retry} and {@code cancel} without a
 * {@code reason}, a {@code resolution} is an operator's note logged with the action.
 */
@Endpoint(id = "ductor")
public class DuctorEndpoint {

	/** The longest text a caller may send in one field (but a key looked up). */
	public static final int MAX_TEXT_LENGTH = 200;

	/** The path segment of idempotency key lookups. */
	private static final String KEYS = "keys";

	/** The path segment of the concurrency slots. */
	private static final String SLOTS = "slots";

	/** The path segment of the alarms. */
	private static final String ALARMS = "alarms";

	/** How far back the overview's throughput reaches. */
	static final Duration THROUGHPUT_WINDOW = Duration.ofMinutes(15);

	private static final int BULK_PAGE = 200;

	private static final Log logger = LogFactory.getLog(DuctorEndpoint.class);

	private final EffectOperations operations;

	private final RecurringAlarms alarms;

	private final DuctorBacklog backlog;

	private final List<Supplier<WorkerStatus>> workers;

	private final @Nullable DuctorInspector inspector;

	private final PayloadMask mask;

	private final @Nullable TransactionOperations transactions;

	/**
	 * @param operations the intents acted on
	 * @param alarms the recurring alarms of the overview, paused and resumed
	 * @param backlog the backlog of the overview
	 * @param workers this instance's workers
	 * @param inspector the queries behind filters, lookups and the overview's figures, or
	 * {@code null} for the status lists and compensation chains only
	 * @param mask what hides sensitive arguments
	 * @param transactions the transactions recurring alarms are paused and resumed in, or
	 * {@code null} to refuse both
	 */
	public DuctorEndpoint(EffectOperations operations, RecurringAlarms alarms, DuctorBacklog backlog,
			List<Supplier<WorkerStatus>> workers, @Nullable DuctorInspector inspector, PayloadMask mask,
			@Nullable TransactionOperations transactions) {
		this.operations = operations;
		this.alarms = alarms;
		this.backlog = backlog;
		this.workers = List.copyOf(workers);
		this.inspector = inspector;
		this.mask = mask;
		this.transactions = transactions;
	}

	@ReadOperation
	public Map<String, Object> overview() {
		Map<String, Object> overview = new LinkedHashMap<>();
		overview.put("backlog", this.backlog.refresh());
		overview.put("workers", this.workers.stream().map(Supplier::get).toList());
		if (this.inspector != null) {
			overview.put("parkedByEffect", this.inspector.parkedByEffect());
			overview.put("leaseOwners", this.inspector.leaseOwners());
			overview.put("throughput", this.inspector.throughput(THROUGHPUT_WINDOW));
		}
		overview.put("alarms", this.alarms.recurringAlarms().stream().map(DuctorEndpoint::alarm).toList());
		overview.put("concurrency", this.operations.concurrency());
		return overview;
	}

	/** A recurring alarm as the overview shows it: plain values only. */
	private static Map<String, Object> alarm(RecurringAlarm alarm) {
		Map<String, Object> view = new LinkedHashMap<>();
		view.put("name", alarm.name());
		view.put("effect", alarm.effectName());
		AlarmSchedule schedule = alarm.schedule();
		if (schedule.cronExpression() != null) {
			view.put("cron", schedule.cronExpression());
			view.put("zone", schedule.zone().getId());
		}
		else {
			view.put("every", schedule.period().toString());
		}
		view.put("missed", schedule.missed().name());
		view.put("grace", schedule.grace().toString());
		view.put("declaredIn", alarm.declaredIn());
		view.put("paused", alarm.paused());
		view.put("nextAt", alarm.nextAt());
		view.put("lastOccurrenceAt", alarm.lastOccurrenceAt());
		view.put("lastKey", alarm.lastKey());
		view.put("lastOutcome", (alarm.lastStatus() != null) ? DbValues.of(alarm.lastStatus())
				: (alarm.lastKey() != null) ? "purged" : null);
		return view;
	}

	public List<EffectIntent> intents(String status, @Nullable Long afterId, @Nullable Integer limit) {
		return intents(status, afterId, limit, null, null, null, null, null);
	}

	/**
	 * The lists and lookups of one path segment: intents by status ({@code GET
	 * /actuator/ductor/{status}}, with the filters of
	 * {@link #intents(String, Long, Integer, String, String, String, String, String)}),
	 * or an idempotency key given as a query parameter ({@code GET
	 * /actuator/ductor/keys?key=&tenant=&pool=}), which finds every key, those that
	 * cannot be a path segment too ({@code /}, {@code ;}, {@code %}, up to 255
	 * characters), or the concurrency slots ({@code GET /actuator/ductor/slots}).
	 * @return the intents, the key's record ({@code null}, 404, when it has none), or the
	 * slots
	 */
	@ReadOperation
	public @Nullable Object intentsOrKey(@Selector String status, @Nullable Long afterId, @Nullable Integer limit,
			@Nullable String effect, @Nullable String key, @Nullable String run, @Nullable String from,
			@Nullable String to, @Nullable String tenant, @Nullable String pool) {
		if (KEYS.equals(status)) {
			if (!present(key)) {
				refuse("a key lookup needs the key: /actuator/ductor/keys?key=&tenant=&pool=");
			}
			return key(key, tenant, pool);
		}
		if (SLOTS.equals(status)) {
			return slots();
		}
		if (ALARMS.equals(status)) {
			refuse("alarms are read at /actuator/ductor/alarms/recurring and /actuator/ductor/alarms/one-shot");
		}
		return intents(status, afterId, limit, effect, key, run, from, to);
	}

	public List<EffectIntent> intents(String status, @Nullable Long afterId, @Nullable Integer limit,
			@Nullable String effect, @Nullable String key, @Nullable String run, @Nullable String from,
			@Nullable String to) {
		requireOneLine("status", status);
		requireOneLine("effect", effect);
		requireOneLine("key", key);
		requireOneLine("run", run);
		requireOneLine("from", from);
		requireOneLine("to", to);
		long after = (afterId != null) ? afterId : 0;
		int size = (limit != null) ? limit : 50;
		boolean filtered = "all".equals(status) || present(effect) || present(key) || present(run) || present(from)
				|| present(to);
		if (this.inspector == null || !filtered) {
			if (filtered) {
				refuse("filters need the inspector of this endpoint; list intents by status alone");
			}
			return masked(this.operations.list(listedStatus(status), after, size));
		}
		IntentFilter filter = new IntentFilter("all".equals(status) ? null : listedStatus(status), blank(effect),
				blank(key), blank(run), time("from", from), time("to", to));
		return masked(this.inspector.search(filter, after, size));
	}

	/**
	 * Lookups by kind: a run's compensation chain, with the run itself when the inspector
	 * is there ({@code runs/{runId}}); one intent ({@code intents/{id}}); runs of a type
	 * ({@code run-types/{type}}); an idempotency key ({@code keys/{key}} with
	 * {@code tenant} and {@code pool}).
	 * @param kind {@code runs}, {@code intents}, {@code run-types} or {@code keys}
	 * @param id the run id, intent id, run type or key
	 * @param tenant the key's tenant scope
	 * @param pool the key's pool
	 * @param status the runs' status
	 * @param after the last run id of the previous page
	 * @param limit the page size
	 * @return what was found, or {@code null} (404) when nothing was
	 */
	@ReadOperation
	public @Nullable Object run(@Selector String kind, @Selector String id, @Nullable String tenant,
			@Nullable String pool, @Nullable String status, @Nullable String after, @Nullable Integer limit,
			@Nullable String prefix) {
		requireOneLine("kind", kind);
		if (!KEYS.equals(kind)) {
			requireOneLine("id", id);
		}
		requireOneLine("tenant", tenant);
		requireOneLine("pool", pool);
		requireOneLine("status", status);
		requireOneLine("after", after);
		requireOneLine("prefix", prefix);
		if ("runs".equals(kind)) {
			CompensationChain chain = this.operations.compensations(id);
			if (this.inspector == null) {
				return chain;
			}
			Map<String, Object> answer = new LinkedHashMap<>();
			answer.put("runId", chain.runId());
			answer.put("compensation", chain.compensation());
			answer.put("links",
					chain.links()
						.stream()
						.map((link) -> new CompensationChain.Link(link.seq(), link.originalKey(), link.effectName(),
								maskedOrNull(link.original()), maskedOrNull(link.compensation())))
						.toList());
			Optional<Map<String, Object>> run = this.inspector.run(id);
			run.ifPresent((found) -> found.put("effects", masked(cast(found.get("effects")))));
			answer.put("run", run.orElse(null));
			return answer;
		}
		if (this.inspector == null) {
			refuse("a run is read at /actuator/ductor/runs/{runId}");
		}
		return switch (kind) {
			case "intents" -> intentDetails(id);
			case "run-types" ->
				this.inspector.runs(id, blank(status), (after != null) ? after : "", (limit != null) ? limit : 50);
			case KEYS -> key(id, tenant, pool);
			case ALARMS ->
				alarms(id, (after != null) ? after : "", (prefix != null) ? prefix : "", (limit != null) ? limit : 50);
			default -> {
				refuse("kind must be runs, intents, run-types, keys or alarms but was '" + kind + "'");
				yield null;
			}
		};
	}

	/**
	 * A page of recurring alarms ({@code alarms/recurring}) or of named one-shot alarms
	 * ({@code alarms/one-shot}), by name.
	 */
	private List<Map<String, Object>> alarms(String which, String after, String prefix, int limit) {
		return switch (which) {
			case "recurring" -> this.inspector.recurringAlarms(after, prefix, limit);
			case "one-shot" -> this.inspector.oneShotAlarms(after, prefix, limit);
			default -> {
				refuse("alarms are recurring or one-shot, not '" + which + "'");
				yield null;
			}
		};
	}

	/**
	 * Every limited effect, by name, with its limit and the slots in use: which intent
	 * holds each, under which lease.
	 */
	private List<Map<String, Object>> slots() {
		if (this.inspector == null) {
			refuse("the slots need the inspector of this endpoint; the overview counts them");
		}
		Map<String, Integer> limits = new TreeMap<>(this.operations.concurrencyLimits());
		Map<String, List<Map<String, Object>>> holders = new TreeMap<>();
		for (Map<String, Object> holder : this.inspector.slotHolders(limits.keySet())) {
			holders.computeIfAbsent((String) holder.remove("effect"), (effect) -> new ArrayList<>()).add(holder);
		}
		List<Map<String, Object>> slots = new ArrayList<>();
		limits.forEach((effect, limit) -> {
			List<Map<String, Object>> held = holders.getOrDefault(effect, List.of());
			Map<String, Object> view = new LinkedHashMap<>();
			view.put("effect", effect);
			view.put("limit", limit);
			view.put("inUse", held.size());
			view.put("holders", held);
			slots.add(view);
		});
		return slots;
	}

	/**
	 * An idempotency key's record, in the pool of {@code @Idempotent} handlers when none
	 * is named.
	 */
	private @Nullable Object key(String key, @Nullable String tenant, @Nullable String pool) {
		requireOneLine("key", key, IdempotentRequest.MAX_KEY_LENGTH);
		requireOneLine("tenant", tenant);
		requireOneLine("pool", pool);
		if (this.inspector == null) {
			refuse("a key lookup needs the inspector of this endpoint");
		}
		return this.inspector
			.key((tenant != null) ? tenant : "", (pool != null && !pool.isEmpty()) ? pool : Idempotent.DEFAULT_POOL,
					key)
			.orElse(null);
	}

	public EffectIntent act(long id, String action, @Nullable String resolution) {
		return act(id, action, resolution, null, null);
	}

	@WriteOperation
	public EffectIntent act(@Selector long id, String action, @Nullable String resolution, @Nullable String reason,
			@Nullable SecurityContext caller) {
		requireOneLine("action", action);
		requireOneLine("resolution", resolution);
		requireOneLine("reason", reason);
		OperatorDecision decision = decision(reason, caller);
		EffectIntent before = this.operations.find(id).orElse(null);
		EffectIntent after = apply(id, action, resolution, decision);
		logger.info("ductor endpoint: " + action + ((resolution != null) ? " (" + resolution + ")" : "") + " on intent "
				+ id + " of effect '" + after.effectName() + "': "
				+ ((before != null) ? DbValues.of(before.status()) : "?") + " -> " + DbValues.of(after.status())
				+ describe(decision));
		return masked(after);
	}

	/**
	 * Pauses or resumes a recurring alarm ({@code POST /actuator/ductor/alarms/pause} or
	 * {@code …/alarms/resume} with the alarm's {@code name}, and a {@code reason}), in a
	 * transaction of its own; the decision is stored with the alarm and logged.
	 * @param kind {@code alarms}
	 * @param action {@code pause} or {@code resume}
	 * @param name the recurring alarm
	 * @param reason why
	 * @param caller who
	 * @return the alarm afterwards, or {@code null} when there is no recurring alarm of
	 * that name
	 */
	@WriteOperation
	public @Nullable Map<String, Object> alarm(@Selector String kind, @Selector String action, String name,
			@Nullable String reason, @Nullable SecurityContext caller) {
		requireOneLine("kind", kind);
		requireOneLine("action", action);
		requireOneLine("name", name);
		requireOneLine("reason", reason);
		if (!ALARMS.equals(kind)) {
			refuse("only alarms are paused or resumed: /actuator/ductor/alarms/pause or /actuator/ductor/alarms/resume");
		}
		String verb = action.toLowerCase(Locale.ROOT);
		if (!"pause".equals(verb) && !"resume".equals(verb)) {
			refuse("action must be pause or resume but was '" + action + "'");
		}
		boolean pause = "pause".equals(verb);
		if (!present(name)) {
			refuse("name must name a recurring alarm");
		}
		if (this.transactions == null || this.inspector == null) {
			refuse("pausing and resuming alarms needs the transactions and inspector of this endpoint");
		}
		OperatorDecision decision = decision(reason, caller);
		Map<String, Object> before = this.inspector.recurringAlarm(name).orElse(null);
		if (before == null) {
			return null;
		}
		Boolean found = this.transactions.execute((transaction) -> pause ? this.alarms.pauseRecurring(name, decision)
				: this.alarms.resumeRecurring(name, decision));
		Map<String, Object> after = Boolean.TRUE.equals(found) ? this.inspector.recurringAlarm(name).orElse(null)
				: null;
		if (after == null) {
			return null;
		}
		logger.info("ductor endpoint: " + verb + " on recurring alarm '" + name + "': " + state(before) + " -> "
				+ state(after) + describe(decision));
		return after;
	}

	private static String state(Map<String, Object> alarm) {
		return Boolean.TRUE.equals(alarm.get("paused")) ? "paused" : "running, next at " + alarm.get("nextAt");
	}

	public Map<String, Object> retryAll(String effect, String status) {
		return retryAll(effect, status, null, null, null, null);
	}

	/**
	 * Acts on every intent of an effect in {@code status}: retries them in batches
	 * (without {@code action}, or {@code retry} without a {@code reason}), or visits each
	 * intent that was in that status when the call started, once, by id, and applies the
	 * action to it with the decision stored; an intent that changed meanwhile is skipped
	 * and counted.
	 * @param effect the effect
	 * @param status {@code failed} or {@code needs_decision}
	 * @param action {@code retry}, {@code cancel} or {@code resolve}, or {@code null} for
	 * retry
	 * @param resolution for {@code resolve}
	 * @param reason why
	 * @param caller who
	 * @return how many intents were moved, and how many skipped
	 */
	@WriteOperation
	public Map<String, Object> retryAll(String effect, String status, @Nullable String action,
			@Nullable String resolution, @Nullable String reason, @Nullable SecurityContext caller) {
		requireOneLine("effect", effect);
		requireOneLine("status", status);
		requireOneLine("action", action);
		requireOneLine("resolution", resolution);
		requireOneLine("reason", reason);
		EffectStatus from = status(status);
		OperatorDecision decision = decision(reason, caller);
		if ((action == null || "retry".equalsIgnoreCase(action)) && decision == null) {
			int retried = this.operations.retryAll(effect, from);
			logger.info("ductor endpoint: retried " + retried + " " + status + " intent(s) of effect '" + effect + "'");
			return Map.of("effect", effect, "status", status, "retried", retried);
		}
		if (this.inspector == null) {
			refuse("a bulk action with a reason needs the inspector of this endpoint");
		}
		if (from != EffectStatus.FAILED && from != EffectStatus.NEEDS_DECISION) {
			refuse("status must be failed or needs_decision but was '" + status + "'");
		}
		String verb = (action != null) ? action.toLowerCase(Locale.ROOT) : "retry";
		OffsetDateTime asOf = this.inspector.databaseNow();
		int moved = 0;
		int skipped = 0;
		long lastId = 0;
		for (List<Long> page = this.inspector.snapshotPage(effect, from, asOf, 0, BULK_PAGE); !page
			.isEmpty(); page = this.inspector.snapshotPage(effect, from, asOf, lastId, BULK_PAGE)) {
			for (long id : page) {
				lastId = id;
				try {
					apply(id, verb, resolution, decision);
					moved++;
				}
				catch (EffectIntentStateException ex) {
					skipped++;
				}
			}
		}
		logger.info("ductor endpoint: " + verb + ((resolution != null) ? " (" + resolution + ")" : "") + " on " + moved
				+ " " + status + " intent(s) of effect '" + effect + "', " + skipped + " skipped" + describe(decision));
		Map<String, Object> answer = new LinkedHashMap<>();
		answer.put("effect", effect);
		answer.put("status", status);
		answer.put("action", verb);
		answer.put("moved", moved);
		answer.put("skipped", skipped);
		return answer;
	}

	private EffectIntent apply(long id, String action, @Nullable String resolution,
			@Nullable OperatorDecision decision) {
		return switch (action.toLowerCase(Locale.ROOT)) {
			case "retry" -> this.operations.retry(id, decision);
			case "cancel" -> this.operations.cancel(id, decision);
			case "resolve" -> this.operations.resolve(id, resolution(resolution), decision);
			default ->
				throw new IllegalArgumentException("action must be retry, cancel or resolve but was '" + action + "'");
		};
	}

	private @Nullable Map<String, Object> intentDetails(String id) {
		long intentId;
		try {
			intentId = Long.parseLong(id);
		}
		catch (NumberFormatException ex) {
			refuse("an intent id is a number, not '" + id + "'");
			return null;
		}
		Optional<EffectIntent> intent = this.inspector.intent(intentId);
		if (intent.isEmpty()) {
			return null;
		}
		Map<String, Object> answer = new LinkedHashMap<>();
		answer.put("intent", masked(intent.get()));
		answer.put("details", this.inspector.details(intentId).orElse(Map.of()));
		return answer;
	}

	private List<EffectIntent> masked(List<EffectIntent> intents) {
		return (this.mask == PayloadMask.NONE) ? intents : intents.stream().map(this::masked).toList();
	}

	private @Nullable EffectIntent maskedOrNull(@Nullable EffectIntent intent) {
		return (intent != null) ? masked(intent) : null;
	}

	private EffectIntent masked(EffectIntent i) {
		if (this.mask == PayloadMask.NONE) {
			return i;
		}
		return new EffectIntent(i.id(), i.effectName(), i.idempotencyKey(), i.status(), i.receiver(), i.attempts(),
				i.maxAttempts(), i.nextAttemptAt(), i.leaseOwner(), i.leaseExpiresAt(), i.orderingKey(), i.alarmName(),
				i.runId(), i.lastError(), this.mask.mask(i.payloadJson()), i.createdAt(), i.updatedAt(), i.finishedAt(),
				i.reconcileRounds(), i.reconcileOutcome(), i.traceContext());
	}

	@SuppressWarnings("unchecked")
	private static List<EffectIntent> cast(Object intents) {
		return (List<EffectIntent>) intents;
	}

	private static @Nullable OperatorDecision decision(@Nullable String reason, @Nullable SecurityContext caller) {
		if (reason == null || reason.isBlank()) {
			return null;
		}
		String by = (caller != null && caller.getPrincipal() != null) ? caller.getPrincipal().getName() : null;
		return new OperatorDecision(reason.strip(), by);
	}

	private static String describe(@Nullable OperatorDecision decision) {
		return (decision != null) ? " by " + decision.by() + ", reason: " + decision.reason() : "";
	}

	private static boolean present(@Nullable String value) {
		return value != null && !value.isEmpty();
	}

	private static @Nullable String blank(@Nullable String value) {
		return present(value) ? value : null;
	}

	private static @Nullable OffsetDateTime time(String field, @Nullable String value) {
		if (!present(value)) {
			return null;
		}
		try {
			return OffsetDateTime.parse(value);
		}
		catch (DateTimeParseException ex) {
			refuse(field + " must be an ISO-8601 time with an offset, e.g. 2026-01-31T12:00:00Z");
			return null;
		}
	}

	/**
	 * Refuses a field that could break the audit line: longer than
	 * {@value #MAX_TEXT_LENGTH} characters, or with a control character (CR, LF, TAB,
	 * ESC, ...) or a Unicode line or paragraph separator. The message never repeats the
	 * text.
	 */
	private static void requireOneLine(String field, @Nullable String value) {
		requireOneLine(field, value, MAX_TEXT_LENGTH);
	}

	private static void requireOneLine(String field, @Nullable String value, int maxLength) {
		if (value == null) {
			return;
		}
		if (value.length() > maxLength) {
			refuse(field + " must be at most " + maxLength + " characters but has " + value.length());
		}
		for (int i = 0; i < value.length(); i++) {
			char c = value.charAt(i);
			int type = Character.getType(c);
			if (Character.isISOControl(c) || type == Character.LINE_SEPARATOR
					|| type == Character.PARAGRAPH_SEPARATOR) {
				refuse(field + " must be one line of text without control characters, found U+%04X at index %d"
					.formatted((int) c, i));
			}
		}
	}

	private static void refuse(String message) {
		throw new InvalidEndpointRequestException(message, message);
	}

	/** The status of a list: a client error when there is no such status. */
	private static EffectStatus listedStatus(String status) {
		try {
			return status(status);
		}
		catch (IllegalArgumentException ex) {
			refuse(ex.getMessage() + " (or all, keys for an idempotency key, or slots)");
			return null;
		}
	}

	private static EffectStatus status(String status) {
		try {
			return DbValues.parse(EffectStatus.class, status);
		}
		catch (IllegalArgumentException ex) {
			throw new IllegalArgumentException(
					"status must be one of pending, in_flight, reconciling, completed, failed, "
							+ "needs_decision, cancelled but was '" + status + "'");
		}
	}

	private static EffectResolution resolution(String resolution) {
		if (resolution == null) {
			throw new IllegalArgumentException(
					"resolve needs a resolution: retry, mark_done, mark_failed or compensate");
		}
		try {
			return EffectResolution.valueOf(resolution.toUpperCase(Locale.ROOT));
		}
		catch (IllegalArgumentException ex) {
			throw new IllegalArgumentException(
					"resolution must be retry, mark_done, mark_failed or compensate but was '" + resolution + "'");
		}
	}

}
