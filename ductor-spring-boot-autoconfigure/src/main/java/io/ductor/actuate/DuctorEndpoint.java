package io.ductor.actuate;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Supplier;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;

import io.ductor.effect.AlarmSchedule;
import io.ductor.effect.CompensationChain;
import io.ductor.effect.EffectIntent;
import io.ductor.effect.EffectOutbox;
import io.ductor.effect.EffectResolution;
import io.ductor.effect.EffectStatus;
import io.ductor.effect.RecurringAlarm;
import io.ductor.health.DuctorBacklog;
import io.ductor.worker.WorkerStatus;

/**
 * The {@code ductor} actuator endpoint. Read: an overview of the backlog and the workers
 * ({@code GET /actuator/ductor}), with the recurring alarms (next occurrence, last occurrence and its
 * outcome) and the concurrency limits (slots in use across all instances), and intents by status with paging
 * ({@code GET /actuator/ductor/{status}?afterId=&limit=}), and a run's compensation chain
 * ({@code GET /actuator/ductor/runs/{runId}}). Write: act on one intent
 * ({@code POST /actuator/ductor/{id}} with {@code action} = {@code retry}, {@code cancel} or
 * {@code resolve} and a {@code resolution}), or retry every failed or undecided intent of an effect
 * ({@code POST /actuator/ductor} with {@code effect} and {@code status}). Every write is logged.
 * <p>
 * Every text the caller sends (action, resolution, effect, status) is at most
 * {@value #MAX_TEXT_LENGTH} characters without control characters or line separators, so that
 * what reaches the audit line is one line the caller cannot forge; anything else is refused with
 * a 400 naming the field, before anything is read or changed. For {@code retry} and
 * {@code cancel}, a {@code resolution} is an operator's note logged with the action.
 */
@Endpoint(id = "ductor")
public class DuctorEndpoint {

	/** The longest text a caller may send in one field. */
	public static final int MAX_TEXT_LENGTH = 200;

	private static final Log logger = LogFactory.getLog(DuctorEndpoint.class);

	private final EffectOutbox outbox;

	private final DuctorBacklog backlog;

	private final List<Supplier<WorkerStatus>> workers;

	public DuctorEndpoint(EffectOutbox outbox, DuctorBacklog backlog, List<Supplier<WorkerStatus>> workers) {
		this.outbox = outbox;
		this.backlog = backlog;
		this.workers = List.copyOf(workers);
	}

	@ReadOperation
	public Map<String, Object> overview() {
		Map<String, Object> overview = new LinkedHashMap<>();
		overview.put("backlog", this.backlog.refresh());
		overview.put("workers", this.workers.stream().map(Supplier::get).toList());
		overview.put("alarms", this.outbox.recurringAlarms().stream().map(DuctorEndpoint::alarm).toList());
		overview.put("concurrency", this.outbox.concurrency());
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
		view.put("lastOutcome", (alarm.lastStatus() != null) ? alarm.lastStatus().dbValue()
				: (alarm.lastKey() != null) ? "purged" : null);
		return view;
	}

	@ReadOperation
	public List<EffectIntent> intents(@Selector String status, @Nullable Long afterId, @Nullable Integer limit) {
		requireOneLine("status", status);
		return this.outbox.list(status(status), (afterId != null) ? afterId : 0, (limit != null) ? limit : 50);
	}

	/**
	 * A run's compensation chain: {@code GET /actuator/ductor/runs/{runId}}.
	 * @param runs {@code runs}
	 * @param runId the run
	 * @return how far the run's undo got, and its compensations in the order they run
	 */
	@ReadOperation
	public CompensationChain run(@Selector String runs, @Selector String runId) {
		requireOneLine("runs", runs);
		requireOneLine("runId", runId);
		if (!"runs".equals(runs)) {
			refuse("a run is read at /actuator/ductor/runs/{runId}");
		}
		return this.outbox.compensations(runId);
	}

	@WriteOperation
	public EffectIntent act(@Selector long id, String action, @Nullable String resolution) {
		requireOneLine("action", action);
		requireOneLine("resolution", resolution);
		EffectIntent before = this.outbox.find(id).orElse(null);
		EffectIntent after = switch (action.toLowerCase(Locale.ROOT)) {
			case "retry" -> this.outbox.retry(id);
			case "cancel" -> this.outbox.cancel(id);
			case "resolve" -> this.outbox.resolve(id, resolution(resolution));
			default -> throw new IllegalArgumentException(
					"action must be retry, cancel or resolve but was '" + action + "'");
		};
		logger.info("ductor endpoint: " + action + ((resolution != null) ? " (" + resolution + ")" : "") + " on intent "
				+ id + " of effect '" + after.effectName() + "': "
				+ ((before != null) ? before.status().dbValue() : "?") + " -> " + after.status().dbValue());
		return after;
	}

	@WriteOperation
	public Map<String, Object> retryAll(String effect, String status) {
		requireOneLine("effect", effect);
		requireOneLine("status", status);
		int retried = this.outbox.retryAll(effect, status(status));
		logger.info("ductor endpoint: retried " + retried + " " + status + " intent(s) of effect '" + effect + "'");
		return Map.of("effect", effect, "status", status, "retried", retried);
	}

	/**
	 * Refuses a field that could break the audit line: longer than {@value #MAX_TEXT_LENGTH}
	 * characters, or with a control character (CR, LF, TAB, ESC, ...) or a Unicode line or
	 * paragraph separator. The message never repeats the text.
	 */
	private static void requireOneLine(String field, @Nullable String value) {
		if (value == null) {
			return;
		}
		if (value.length() > MAX_TEXT_LENGTH) {
			refuse(field + " must be at most " + MAX_TEXT_LENGTH + " characters but has " + value.length());
		}
		for (int i = 0; i < value.length(); i++) {
			char c = value.charAt(i);
			int type = Character.getType(c);
			if (Character.isISOControl(c) || type == Character.LINE_SEPARATOR || type == Character.PARAGRAPH_SEPARATOR) {
				refuse(field + " must be one line of text without control characters, found U+%04X at index %d"
					.formatted((int) c, i));
			}
		}
	}

	private static void refuse(String message) {
		throw new InvalidEndpointRequestException(message, message);
	}

	private static EffectStatus status(String status) {
		try {
			return EffectStatus.fromDb(status);
		}
		catch (IllegalArgumentException ex) {
			throw new IllegalArgumentException("status must be one of pending, in_flight, reconciling, completed, failed, "
					+ "needs_decision, cancelled but was '" + status + "'");
		}
	}

	private static EffectResolution resolution(String resolution) {
		if (resolution == null) {
			throw new IllegalArgumentException("resolve needs a resolution: retry, mark_done, mark_failed or compensate");
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
