package io.ductor.effect.internal;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.transaction.support.TransactionTemplate;

import io.ductor.effect.AlarmSchedule;
import io.ductor.effect.MissedOccurrences;
import io.ductor.effect.RecurringAlarm;
import io.ductor.metrics.internal.DuctorObserver;
import io.ductor.worker.internal.WorkerTask;

/**
 * One round of the recurring-alarm scheduler. In one transaction it locks the due alarms
 * that no other instance's round holds ({@code FOR UPDATE SKIP LOCKED}, due by the
 * database clock), records each due occurrence as an ordinary pending intent keyed
 * {@code alarm:<name>@<instant>}, and moves each alarm's {@code next_at} on with an
 * update fenced by the {@code next_at} it read. So:
 * <ul>
 * <li>none is lost: {@code next_at} passes an occurrence only in the transaction that
 * records it (or, by the alarm's policy, decides to skip it); a crash before the commit
 * leaves both as they were, and the next round, in any instance, does the same work
 * again;</li>
 * <li>none is recorded twice: the key of an occurrence is a function of the alarm and the
 * instant, and the intent table's unique key turns a second recording into nothing,
 * whatever the lock did.</li>
 * </ul>
 */
public class AlarmScheduler implements WorkerTask {

	private static final Log logger = LogFactory.getLog(AlarmScheduler.class);

	/**
	 * The most occurrences of one alarm one round records; the rest wait for the next
	 * round.
	 */
	public static final int MAX_OCCURRENCES_PER_ROUND = 1000;

	private final RecurringAlarmStore alarms;

	private final IntentStore intents;

	private final EffectRegistry registry;

	private final TransactionTemplate transactions;

	private final Runnable wakeUp;

	private final DuctorObserver observer;

	private final int batchSize;

	private final Set<String> warned = new HashSet<>();

	AlarmScheduler(RecurringAlarmStore alarms, IntentStore intents, EffectRegistry registry,
			TransactionTemplate transactions, Runnable wakeUp, DuctorObserver observer, int batchSize) {
		this.alarms = alarms;
		this.intents = intents;
		this.registry = registry;
		this.transactions = transactions;
		this.wakeUp = wakeUp;
		this.observer = observer;
		this.batchSize = batchSize;
	}

	@Override
	public boolean runOnce() {
		Round round = this.transactions.execute((status) -> round());
		if (round == null) {
			return false;
		}
		if (round.recorded > 0) {
			this.wakeUp.run();
		}
		return round.more;
	}

	private Round round() {
		List<RecurringAlarmStore.Stored> due = this.alarms.lockDue(this.batchSize);
		Round round = new Round();
		round.more = due.size() == this.batchSize;
		for (RecurringAlarmStore.Stored alarm : due) {
			EffectDefinition effect = this.registry.find(alarm.effectName());
			if (effect == null) {
				// another instance (a newer or older version of the application) may know
				// the effect
				if (this.warned.add(alarm.name())) {
					logger.warn("Ductor's recurring alarm '" + alarm.name() + "' runs effect '" + alarm.effectName()
							+ "', which this instance does not have; it leaves the alarm to the instances that do");
				}
				continue;
			}
			Plan plan = plan(alarm.schedule(), alarm.nextAt(), alarm.dbNow());
			String lastKey = null;
			for (Instant instant : plan.occurrences()) {
				lastKey = RecurringAlarm.occurrenceKey(alarm.name(), instant);
				this.intents
					.insert(new IntentStore.NewIntent(effect.name(), lastKey, alarm.payloadJson(), alarm.fingerprint(),
							effect.receiver(), effect.maxAttempts(), Duration.ZERO, null, null, null, null));
			}
			Instant last = plan.occurrences().isEmpty() ? null : plan.occurrences().get(plan.occurrences().size() - 1);
			if (plan.next() == null) {
				logger.warn("Ductor's recurring alarm '" + alarm.name() + "' (" + alarm.schedule()
						+ ") never fires again; it is paused");
				this.alarms.advance(alarm.name(), alarm.nextAt(), alarm.nextAt(), last, lastKey);
				this.alarms.setPaused(alarm.name(), true, null);
				continue;
			}
			if (!this.alarms.advance(alarm.name(), alarm.nextAt(), plan.next(), last, lastKey)) {
				throw new IllegalStateException("Recurring alarm '" + alarm.name() + "' moved under this round's lock");
			}
			round.recorded += plan.occurrences().size();
			round.more |= plan.more();
			this.observer.alarmOccurrences(alarm.name(), plan.occurrences().size(), plan.missed());
		}
		return round;
	}

	/**
	 * Which occurrences from {@code nextAt} up to {@code now} are recorded, by the
	 * schedule's policy, and the alarm's next occurrence after them.
	 */
	public static Plan plan(AlarmSchedule schedule, Instant nextAt, Instant now) {
		List<Instant> occurrences = new ArrayList<>();
		boolean missed = false;
		Instant cursor = nextAt;
		Instant lateBefore = now.minus(schedule.grace());
		if (cursor.isBefore(lateBefore) && schedule.missed() != MissedOccurrences.RUN_EACH) {
			if (schedule.missed() == MissedOccurrences.RUN_ONCE) {
				occurrences.add(cursor);
			}
			// jump over the missed ones: the first occurrence not late is the first at or
			// after lateBefore
			Instant first = schedule.next(lateBefore.minusNanos(1));
			missed = true;
			cursor = first;
		}
		while (cursor != null && !cursor.isAfter(now) && occurrences.size() < MAX_OCCURRENCES_PER_ROUND) {
			occurrences.add(cursor);
			cursor = schedule.next(cursor);
		}
		boolean more = cursor != null && !cursor.isAfter(now);
		return new Plan(occurrences, cursor, more, missed);
	}

	/**
	 * @param occurrences the instants to record, oldest first
	 * @param next the alarm's next occurrence, {@code null} when it never fires again
	 * @param more whether occurrences are still due after these (a round records at most
	 * {@link #MAX_OCCURRENCES_PER_ROUND} of one alarm)
	 * @param missed whether occurrences were missed (skipped, or folded into one by
	 * {@link MissedOccurrences#RUN_ONCE})
	 */
	public record Plan(List<Instant> occurrences, Instant next, boolean more, boolean missed) {
	}

	private static final class Round {

		int recorded;

		boolean more;

	}

}
