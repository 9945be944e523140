package io.ductor.effect.internal;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.transaction.support.TransactionTemplate;

import io.ductor.effect.AlarmSchedule;
import io.ductor.effect.DurableEffectException;
import io.ductor.effect.OperatorDecision;
import io.ductor.effect.RecurringAlarm;
import io.ductor.internal.Ids;

/**
 * Declares, reschedules, pauses, resumes and cancels recurring alarms in
 * {@code eec_recurring_alarm}, in the caller's transaction (or, for the alarms declared
 * in properties, in one of its own at start-up). Declaring an alarm that exists changes
 * it under its row lock: a scheduler round holding it finishes first. A changed schedule
 * starts with its first occurrence after the change (by the database clock, and after the
 * last occurrence recorded); an unchanged one keeps its next occurrence, so an alarm
 * redeclared after an outage still has the occurrences it missed.
 */
public class RecurringAlarms {

	private static final Log logger = LogFactory.getLog(RecurringAlarms.class);

	static final String PROPERTIES = "properties";

	public static final String API = "api";

	private final RecurringAlarmStore store;

	private final EffectRegistry registry;

	private final EffectPayloads payloads;

	private final AlarmOccurrences occurrences;

	public RecurringAlarms(RecurringAlarmStore store, EffectRegistry registry, EffectPayloads payloads,
			AlarmOccurrences occurrences) {
		this.store = store;
		this.registry = registry;
		this.payloads = payloads;
		this.occurrences = occurrences;
	}

	/**
	 * Declares or redeclares one alarm in the caller's transaction.
	 * @return the instant of its next occurrence
	 */
	public Instant declare(String name, AlarmSchedule schedule, EffectDefinition effect, Object[] args,
			String declaredIn) {
		Ids.require("alarmName", name);
		Objects.requireNonNull(schedule, "schedule must not be null");
		EffectPayloads.Payload payload = this.payloads.encode(effect, args);
		while (true) {
			RecurringAlarmStore.Stored current = this.store.lock(name).orElse(null);
			if (current == null) {
				Instant next = first(schedule, this.store.databaseNow(), null, name);
				if (this.store.insert(name, effect.name(), schedule, payload, declaredIn, next)) {
					return next;
				}
				// another transaction declared it first: lock its row and compare with it
				continue;
			}
			boolean sameInstants = RecurringAlarmStore.sameInstants(current.schedule(), schedule);
			boolean unchanged = sameInstants && current.effectName().equals(effect.name())
					&& current.fingerprint().equals(payload.fingerprint())
					&& current.schedule().missed() == schedule.missed()
					&& current.schedule().grace().equals(schedule.grace()) && current.declaredIn().equals(declaredIn);
			if (unchanged) {
				return current.nextAt();
			}
			Instant next = sameInstants ? current.nextAt()
					: first(schedule, current.dbNow(), current.lastOccurrenceAt(), name);
			this.store.update(name, effect.name(), schedule, payload, declaredIn, next);
			return next;
		}
	}

	/**
	 * Declares the alarms of the properties, each in a transaction of its own, and
	 * deletes the alarms declared in properties earlier that these no longer name (their
	 * occurrences already recorded still run).
	 */
	public void declareAll(List<RecurringAlarmDeclaration> declared, TransactionTemplate transactions) {
		List<String> names = new ArrayList<>();
		for (RecurringAlarmDeclaration alarm : declared) {
			EffectDefinition effect = this.registry.find(alarm.effectName());
			if (effect == null) {
				throw new DurableEffectException(alarm.property() + ".effect names an effect that does not exist: "
						+ "no @DurableEffect method has the name '" + alarm.effectName() + "'");
			}
			Object[] args;
			try {
				args = this.payloads.fromText(effect, alarm.arguments());
			}
			catch (RuntimeException ex) {
				throw new DurableEffectException(alarm.property() + ".arguments: " + ex.getMessage(), ex);
			}
			RecurringAlarmStore.Stored stored = transactions.execute((status) -> {
				declare(alarm.name(), alarm.schedule(), effect, args, PROPERTIES);
				return this.store.lock(alarm.name()).orElseThrow();
			});
			String described = "Ductor's recurring alarm '" + alarm.name() + "' (" + alarm.schedule() + ", effect '"
					+ effect.name() + "')";
			logger
				.info((stored.paused())
						? described + " is paused; it fires again once resumed (the console's Resume, or"
								+ " RecurringAlarms.resumeRecurring)"
						: described + " next fires at " + stored.nextAt());
			names.add(alarm.name());
		}
		List<String> removed = transactions.execute((status) -> this.store.deleteUndeclared(names));
		if (removed != null && !removed.isEmpty()) {
			logger.info("Ductor deleted the recurring alarm(s) " + removed
					+ ", which ductor.effects.alarms no longer declares;" + " occurrences already recorded still run");
		}
	}

	/**
	 * Pauses an alarm in the caller's transaction, storing the operator's decision when
	 * there is one. @return whether it exists
	 */
	public boolean pause(String name, @Nullable OperatorDecision decision) {
		return this.store.lock(Ids.require("alarmName", name)).isPresent()
				&& this.store.setPaused(name, true, null, decision);
	}

	/**
	 * Resumes an alarm in the caller's transaction, with its first occurrence after now:
	 * the occurrences of the pause are not made up. A decision is stored when the alarm
	 * was paused (resuming a running alarm changes nothing). @return whether it exists
	 */
	public boolean resume(String name, @Nullable OperatorDecision decision) {
		RecurringAlarmStore.Stored current = this.store.lock(Ids.require("alarmName", name)).orElse(null);
		if (current == null) {
			return false;
		}
		if (!current.paused()) {
			return true;
		}
		return this.store.setPaused(name, false,
				first(current.schedule(), current.dbNow(), current.lastOccurrenceAt(), name), decision);
	}

	/** Deletes an alarm in the caller's transaction. @return whether it existed */
	public boolean cancel(String name) {
		Ids.require("alarmName", name);
		return this.store.lock(name).isPresent() && this.store.delete(name);
	}

	/**
	 * For tests, in the caller's transaction: every alarm starts again from the database
	 * clock, as if no clock had ever gone past it. An unpaused alarm's next occurrence is
	 * its first after now; the finished intents of occurrences after now (recorded while
	 * an earlier test's clock stood later) are deleted, and so is a last occurrence after
	 * now, so that those instants can be recorded again.
	 */
	public void restartAtDatabaseClock() {
		for (RecurringAlarmStore.Stored alarm : this.store.lockAll()) {
			Instant next = alarm.paused() ? null : alarm.schedule().next(alarm.dbNow());
			this.occurrences.forgetFinishedAfterNow(alarm.name());
			this.store.restart(alarm.name(), next);
		}
	}

	public List<RecurringAlarm> list() {
		return this.store.list();
	}

	/** The first occurrence after both {@code now} and the last occurrence recorded. */
	private static Instant first(AlarmSchedule schedule, Instant now, Instant lastOccurrence, String name) {
		Instant after = (lastOccurrence != null && lastOccurrence.isAfter(now)) ? lastOccurrence : now;
		Instant next = schedule.next(after);
		if (next == null) {
			throw new IllegalArgumentException(
					"Recurring alarm '" + name + "' (" + schedule + ") never fires after " + after);
		}
		return next;
	}

}
