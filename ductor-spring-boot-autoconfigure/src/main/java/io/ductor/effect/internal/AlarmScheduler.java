package io.ductor.effect.internal;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.transaction.PlatformTransactionManager;
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
 * records it (or, by the alarm's policy, decides to skip it: run-once and skip fold or
 * skip missed occurrences, and run-each skips the missed ones older than the newest
 * {@value #MAX_MISSED_RUN_EACH}, with a warning); a crash before the commit leaves both
 * as they were, and the next round, in any instance, does the same work again;</li>
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

	/**
	 * The most missed occurrences of one alarm that {@link MissedOccurrences#RUN_EACH}
	 * records: the newest ones; older ones are skipped.
	 */
	public static final int MAX_MISSED_RUN_EACH = 1000;

	/**
	 * How many skipped occurrences of a cron alarm are counted one by one for the
	 * warning; beyond it, the warning says "more than".
	 */
	static final long SKIPPED_COUNT_LIMIT = 100_000;

	private final RecurringAlarmStore alarms;

	private final IntentRecorder intents;

	private final EffectRegistry registry;

	private final TransactionTemplate transactions;

	private final LocalDrainer drainer;

	private final DuctorObserver observer;

	private final int batchSize;

	private final Set<String> warned = new HashSet<>();

	/**
	 * @param alarms the stored recurring alarms
	 * @param intents records the occurrences and wakes the drainers of other instances
	 * @param registry the effects of the application
	 * @param transactionManager the transaction manager of Ductor's own transactions
	 * @param drainer this instance's drainer, woken when occurrences were recorded
	 * @param observer what is told about recorded and missed occurrences
	 * @param batchSize the most due alarms one round handles
	 */
	public AlarmScheduler(RecurringAlarmStore alarms, IntentRecorder intents, EffectRegistry registry,
			PlatformTransactionManager transactionManager, LocalDrainer drainer, DuctorObserver observer,
			int batchSize) {
		this.alarms = alarms;
		this.intents = intents;
		this.registry = registry;
		this.transactions = new TransactionTemplate(transactionManager);
		this.drainer = drainer;
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
			this.drainer.wakeUp();
			this.intents.notifyDrainersNow(this.drainer.instanceId());
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
			if (plan.skipped() > 0) {
				logger.warn("Ductor's recurring alarm '" + alarm.name() + "' (" + alarm.schedule()
						+ ", missed occurrences: run-each) missed more occurrences than it records: it records the "
						+ "newest " + number(MAX_MISSED_RUN_EACH) + " of them, from " + plan.occurrences().get(0)
						+ ", and skips the " + skippedText(alarm.schedule(), plan.skipped()) + " before them, from "
						+ alarm.nextAt());
			}
			String lastKey = null;
			for (Instant instant : plan.occurrences()) {
				lastKey = RecurringAlarm.occurrenceKey(alarm.name(), instant);
				this.intents.insert(
						new IntentRecorder.NewIntent(effect.name(), lastKey, alarm.payloadJson(), alarm.fingerprint(),
								effect.receiver(), effect.maxAttempts(), Duration.ZERO, null, null, null, null));
			}
			Instant last = plan.occurrences().isEmpty() ? null : plan.occurrences().get(plan.occurrences().size() - 1);
			if (plan.next() == null) {
				logger.warn("Ductor's recurring alarm '" + alarm.name() + "' (" + alarm.schedule()
						+ ") never fires again; it is paused");
				this.alarms.advance(alarm.name(), alarm.nextAt(), alarm.nextAt(), last, lastKey);
				this.alarms.setPaused(alarm.name(), true, null, null);
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
	 * schedule's policy, and the alarm's next occurrence after them. Run-each records the
	 * newest {@link #MAX_MISSED_RUN_EACH} missed occurrences at most, so that an alarm
	 * every second after a month's outage records a thousand occurrences, not millions.
	 */
	public static Plan plan(AlarmSchedule schedule, Instant nextAt, Instant now) {
		List<Instant> occurrences = new ArrayList<>();
		boolean missed = false;
		Instant cursor = nextAt;
		Instant lateBefore = now.minus(schedule.grace());
		long skipped = 0;
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
		else if (cursor.isBefore(lateBefore)
				&& count(schedule, cursor, lateBefore, MAX_MISSED_RUN_EACH + 1) > MAX_MISSED_RUN_EACH) {
			// run each, after an outage longer than a thousand occurrences: only the
			// newest thousand missed ones
			Instant first = newestMissed(schedule, cursor, lateBefore);
			skipped = countSkipped(schedule, cursor, first);
			missed = true;
			cursor = first;
		}
		while (cursor != null && !cursor.isAfter(now) && occurrences.size() < MAX_OCCURRENCES_PER_ROUND) {
			occurrences.add(cursor);
			cursor = schedule.next(cursor);
		}
		boolean more = cursor != null && !cursor.isAfter(now);
		return new Plan(occurrences, cursor, more, missed, skipped);
	}

	/**
	 * The oldest of the newest {@link #MAX_MISSED_RUN_EACH} occurrences before
	 * {@code lateBefore}, when more than that many are at or after {@code from}: a binary
	 * search on the millisecond (every occurrence is on a whole millisecond, at least one
	 * millisecond apart), each step counting at most one more than that many.
	 */
	private static Instant newestMissed(AlarmSchedule schedule, Instant from, Instant lateBefore) {
		// more than the limit at or after lo; at most the limit at or after hi
		long lo = from.toEpochMilli();
		long hi = lateBefore.toEpochMilli() + 1;
		while (hi - lo > 1) {
			long mid = lo + (hi - lo) / 2;
			if (count(schedule, Instant.ofEpochMilli(mid), lateBefore, MAX_MISSED_RUN_EACH + 1) > MAX_MISSED_RUN_EACH) {
				lo = mid;
			}
			else {
				hi = mid;
			}
		}
		// one occurrence at lo: the limit of them at or after hi
		return schedule.next(Instant.ofEpochMilli(hi).minusNanos(1));
	}

	/**
	 * How many occurrences are at or after {@code from} and before {@code to}, counted up
	 * to {@code limit}.
	 */
	private static long count(AlarmSchedule schedule, Instant from, Instant to, long limit) {
		long count = 0;
		for (Instant t = schedule.next(from.minusNanos(1)); t != null && t.isBefore(to)
				&& count < limit; t = schedule.next(t)) {
			count++;
		}
		return count;
	}

	/**
	 * How many occurrences from {@code from} (one of them) are before {@code to}: exact
	 * for a period, counted up to just over {@link #SKIPPED_COUNT_LIMIT} for a cron.
	 */
	private static long countSkipped(AlarmSchedule schedule, Instant from, Instant to) {
		if (schedule.period() != null) {
			long period = schedule.period().toMillis();
			return Math.floorDiv(to.toEpochMilli() - 1, period) - Math.floorDiv(from.toEpochMilli() - 1, period);
		}
		return count(schedule, from, to, SKIPPED_COUNT_LIMIT + 1);
	}

	private static String skippedText(AlarmSchedule schedule, long skipped) {
		return (schedule.period() == null && skipped > SKIPPED_COUNT_LIMIT) ? "more than " + number(SKIPPED_COUNT_LIMIT)
				: number(skipped);
	}

	private static String number(long n) {
		return String.format(Locale.ROOT, "%,d", n);
	}

	/**
	 * @param occurrences the instants to record, oldest first
	 * @param next the alarm's next occurrence, {@code null} when it never fires again
	 * @param more whether occurrences are still due after these (a round records at most
	 * {@link #MAX_OCCURRENCES_PER_ROUND} of one alarm)
	 * @param missed whether occurrences were missed (skipped, or folded into one by
	 * {@link MissedOccurrences#RUN_ONCE}), and not recorded one by one
	 * @param skipped how many missed occurrences {@link MissedOccurrences#RUN_EACH}
	 * skipped, older than the newest {@link #MAX_MISSED_RUN_EACH} (for a cron, one more
	 * than {@link #SKIPPED_COUNT_LIMIT} stands for more than that)
	 */
	public record Plan(List<Instant> occurrences, Instant next, boolean more, boolean missed, long skipped) {
	}

	private static final class Round {

		int recorded;

		boolean more;

	}

}
