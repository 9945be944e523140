package io.ductor.effect;

import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.List;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

import io.ductor.effect.internal.AlarmScheduler;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What one scheduler round records of an alarm, against a model that walks every instant
 * of the schedule one by one: for random schedules (periods, and crons in zones with
 * daylight-saving changes), next occurrences, clocks, graces and policies. run-each
 * records every instant from the next occurrence up to now; skip only those within the
 * grace; run-once those within the grace and, when some were missed, the first missed
 * one; the alarm then goes on with the first instant after now; and none is recorded that
 * is not an instant of the schedule. After a long outage, run-each records only the
 * newest thousand missed occurrences.
 */
class AlarmPlanPropertyTest {

	private static final Instant BASE = Instant.parse("2026-03-27T00:00:00Z");

	@Property(tries = 300)
	void aRoundRecordsWhatThePolicySaysAndGoesOnAfterNow(@ForAll("cases") Case c) {
		AlarmScheduler.Plan plan = AlarmScheduler.plan(c.schedule(), c.nextAt(), c.now());
		List<Instant> due = new ArrayList<>();
		for (Instant t = c.nextAt(); t != null && !t.isAfter(c.now()); t = c.schedule().next(t)) {
			due.add(t);
		}
		Instant lateBefore = c.now().minus(c.schedule().grace());
		List<Instant> onTime = due.stream().filter((t) -> !t.isBefore(lateBefore)).toList();
		List<Instant> missed = due.stream().filter((t) -> t.isBefore(lateBefore)).toList();
		List<Instant> expected = new ArrayList<>();
		switch (c.schedule().missed()) {
			case RUN_EACH -> expected.addAll(due);
			case SKIP -> expected.addAll(onTime);
			case RUN_ONCE -> {
				if (!missed.isEmpty()) {
					expected.add(missed.get(0));
				}
				expected.addAll(onTime);
			}
		}
		assertThat(plan.occurrences()).isEqualTo(expected);
		assertThat(plan.missed()).isEqualTo(!missed.isEmpty() && c.schedule().missed() != MissedOccurrences.RUN_EACH);
		assertThat(plan.more()).isFalse();
		assertThat(plan.next()).isAfter(c.now())
			.isEqualTo(c.schedule().next(due.isEmpty() ? c.nextAt().minusNanos(1) : due.get(due.size() - 1)));
	}

	/**
	 * Run-each after an outage of more than a thousand occurrences (up to five years of
	 * an alarm every second): the round records the newest thousand missed occurrences,
	 * one after the other from the first of them, counts the older ones as skipped, and
	 * goes on after them.
	 */
	@Property(tries = 40)
	void runEachAfterALongOutageRecordsTheNewestThousandMissedOccurrences(@ForAll("longOutages") Case c) {
		AlarmSchedule schedule = c.schedule();
		Instant lateBefore = c.now().minus(schedule.grace());
		AlarmScheduler.Plan plan = AlarmScheduler.plan(schedule, c.nextAt(), c.now());

		List<Instant> recorded = plan.occurrences();
		assertThat(recorded).hasSize(AlarmScheduler.MAX_OCCURRENCES_PER_ROUND);
		Instant first = recorded.get(0);
		assertThat(first).isAfter(c.nextAt());
		// the newest thousand missed: from the first of them, a thousand instants before
		// lateBefore, and the next one is not missed
		Instant t = first;
		for (int i = 0; i < AlarmScheduler.MAX_MISSED_RUN_EACH; i++) {
			assertThat(t).isBefore(lateBefore);
			if (i < recorded.size()) {
				assertThat(recorded.get(i)).isEqualTo(t);
			}
			t = schedule.next(t);
		}
		assertThat(t).isAfterOrEqualTo(lateBefore);
		assertThat(plan.missed()).isTrue();
		assertThat(plan.next()).isEqualTo(schedule.next(recorded.get(recorded.size() - 1)));
		assertThat(plan.more()).isEqualTo(!plan.next().isAfter(c.now()));
		// every instant from the alarm's next occurrence up to the first recorded one is
		// skipped
		if (schedule.period() != null) {
			assertThat(plan.skipped())
				.isEqualTo((first.toEpochMilli() - c.nextAt().toEpochMilli()) / schedule.period().toMillis());
		}
		else {
			long skipped = 0;
			for (Instant s = c.nextAt(); s.isBefore(first) && skipped <= 100_000; s = schedule.next(s)) {
				skipped++;
			}
			assertThat(plan.skipped()).isEqualTo(skipped);
		}
	}

	@Provide
	Arbitrary<Case> longOutages() {
		Arbitrary<AlarmSchedule> periods = Arbitraries.of(1, 2, 5, 60)
			.map((seconds) -> AlarmSchedule.every(Duration.ofSeconds(seconds)));
		Arbitrary<AlarmSchedule> crons = Combinators
			.combine(Arbitraries.of("* * * * * *", "*/7 * * * * *", "0 * * * * *", "0 */15 * * * *"),
					Arbitraries.of("UTC", "Europe/Berlin", "Australia/Lord_Howe"))
			.as((cron, zone) -> AlarmSchedule.cron(cron, ZoneId.of(zone)));
		Arbitrary<AlarmSchedule> schedules = Combinators
			.combine(Arbitraries.oneOf(periods, crons), Arbitraries.of(0L, 1L, 30L, 600L))
			.as((schedule, grace) -> schedule.withMissed(MissedOccurrences.RUN_EACH)
				.withGrace(Duration.ofSeconds(grace)));
		return Combinators
			.combine(schedules, Arbitraries.longs().between(0, 9 * 86_400L),
					Arbitraries.longs().between(1, 5 * 365 * 86_400L))
			.as((schedule, from, outage) -> {
				Instant nextAt = schedule.next(BASE.plusSeconds(from));
				return new Case(schedule, nextAt, nextAt.plusSeconds(outage));
			})
			.filter((c) -> missedAtLeast(c, AlarmScheduler.MAX_MISSED_RUN_EACH + 1));
	}

	private static boolean missedAtLeast(Case c, int n) {
		Instant lateBefore = c.now().minus(c.schedule().grace());
		int missed = 0;
		for (Instant t = c.nextAt(); t.isBefore(lateBefore) && missed < n; t = c.schedule().next(t)) {
			missed++;
		}
		return missed >= n;
	}

	@Provide
	Arbitrary<Case> cases() {
		Arbitrary<AlarmSchedule> periods = Arbitraries.of(1, 2, 5, 60, 900, 3600)
			.map((seconds) -> AlarmSchedule.every(Duration.ofSeconds(seconds)));
		Arbitrary<AlarmSchedule> crons = Combinators
			.combine(Arbitraries.of("0 30 2 * * *", "0 0 * * * *", "0 */15 * * * *", "*/7 * * * * *"),
					Arbitraries.of("UTC", "Europe/Berlin", "America/New_York", "Australia/Lord_Howe"))
			.as((cron, zone) -> AlarmSchedule.cron(cron, ZoneId.of(zone)));
		Arbitrary<AlarmSchedule> schedules = Combinators
			.combine(Arbitraries.oneOf(periods, crons), Arbitraries.of(MissedOccurrences.class),
					Arbitraries.of(0L, 1L, 30L, 600L, 7200L))
			.as((schedule, missed, grace) -> schedule.withMissed(missed).withGrace(Duration.ofSeconds(grace)));
		// the alarm's next occurrence somewhere in the 9 days around two DST changes, and
		// now up to a day later
		return Combinators
			.combine(schedules, Arbitraries.longs().between(0, 9 * 86_400L), Arbitraries.longs().between(-120, 86_400L))
			.as((schedule, from, late) -> {
				Instant nextAt = schedule.next(BASE.plusSeconds(from));
				return new Case(schedule, nextAt, nextAt.plusSeconds(late));
			})
			.filter((c) -> countDue(c) < AlarmScheduler.MAX_OCCURRENCES_PER_ROUND);
	}

	private static int countDue(Case c) {
		int n = 0;
		for (Instant t = c.nextAt(); !t.isAfter(c.now())
				&& n < AlarmScheduler.MAX_OCCURRENCES_PER_ROUND; t = c.schedule().next(t)) {
			n++;
		}
		return n;
	}

	record Case(AlarmSchedule schedule, Instant nextAt, Instant now) {
	}

}
