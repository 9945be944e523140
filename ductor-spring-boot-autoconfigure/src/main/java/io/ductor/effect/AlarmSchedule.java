package io.ductor.effect;

import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.Objects;

import org.jspecify.annotations.Nullable;

import org.springframework.scheduling.support.CronExpression;

/**
 * When a recurring alarm's occurrences are: a Spring {@link CronExpression} (six fields,
 * seconds first) in a time zone, or a fixed period. Daylight-saving changes behave as
 * {@link CronExpression#next} defines them for the zone: a local time the clocks skip
 * does not occur that day (a daily {@code 0 30 2 * * *} in Europe/Berlin has no
 * occurrence on the last Sunday of March), and a local time the clocks repeat occurs at
 * both of its instants (on the last Sunday of October it fires at 00:30Z and at 01:30Z).
 * The two are different instants, so they have different keys: each is one occurrence.
 * <p>
 * A period's occurrences are the instants that are whole multiples of it since the epoch
 * (1970-01-01T00:00:00Z): {@code every(Duration.ofSeconds(1))} fires on every whole
 * second, {@code every(Duration.ofHours(1))} at the top of every UTC hour, whichever
 * instance computes them.
 * <p>
 * Also says what happens to occurrences the scheduler reaches late: one more than
 * {@link #grace()} past its instant is missed, and {@link #missed()} decides whether it
 * runs.
 */
public final class AlarmSchedule {

	/**
	 * The grace unless set: an occurrence reached within a minute of its instant is on
	 * time.
	 */
	public static final Duration DEFAULT_GRACE = Duration.ofMinutes(1);

	private final @Nullable String cron;

	private final @Nullable CronExpression expression;

	private final @Nullable Duration every;

	private final ZoneId zone;

	private final MissedOccurrences missed;

	private final Duration grace;

	private AlarmSchedule(@Nullable String cron, @Nullable Duration every, ZoneId zone, MissedOccurrences missed,
			Duration grace) {
		this.cron = cron;
		this.expression = (cron != null) ? CronExpression.parse(cron) : null;
		this.every = every;
		this.zone = zone;
		this.missed = Objects.requireNonNull(missed, "missed must not be null");
		this.grace = Objects.requireNonNull(grace, "grace must not be null");
		if (grace.isNegative()) {
			throw new IllegalArgumentException("grace must not be negative but was " + grace);
		}
	}

	/**
	 * A cron schedule in a time zone.
	 * @param cron a Spring cron expression, six fields with seconds first
	 * ({@code "0 0 9 * * MON-FRI"})
	 * @param zone the zone its fields are read in
	 * @return the schedule, missed occurrences {@link MissedOccurrences#RUN_ONCE}
	 * @throws IllegalArgumentException for an invalid expression
	 */
	public static AlarmSchedule cron(String cron, ZoneId zone) {
		Objects.requireNonNull(cron, "cron must not be null");
		return new AlarmSchedule(cron, null, Objects.requireNonNull(zone, "zone must not be null"),
				MissedOccurrences.RUN_ONCE, DEFAULT_GRACE);
	}

	/**
	 * A cron schedule in UTC.
	 * @param cron a Spring cron expression
	 * @return the schedule
	 */
	public static AlarmSchedule cron(String cron) {
		return cron(cron, ZoneOffset.UTC);
	}

	/**
	 * A fixed period, aligned on the epoch.
	 * @param every the period, at least one millisecond
	 * @return the schedule, missed occurrences {@link MissedOccurrences#RUN_ONCE}
	 */
	public static AlarmSchedule every(Duration every) {
		Objects.requireNonNull(every, "every must not be null");
		if (every.toMillis() < 1 || every.toNanos() % 1_000_000 != 0) {
			throw new IllegalArgumentException(
					"every must be a positive whole number of milliseconds but was " + every);
		}
		return new AlarmSchedule(null, every, ZoneOffset.UTC, MissedOccurrences.RUN_ONCE, DEFAULT_GRACE);
	}

	/**
	 * @param missed what happens to missed occurrences
	 * @return this schedule with that policy
	 */
	public AlarmSchedule withMissed(MissedOccurrences missed) {
		return new AlarmSchedule(this.cron, this.every, this.zone, missed, this.grace);
	}

	/**
	 * @param grace how late an occurrence may be reached and still count as on time
	 * @return this schedule with that grace
	 */
	public AlarmSchedule withGrace(Duration grace) {
		return new AlarmSchedule(this.cron, this.every, this.zone, this.missed, grace);
	}

	/**
	 * @param after an instant
	 * @return the first occurrence strictly after it, or {@code null} when the cron
	 * expression never matches again
	 */
	public @Nullable Instant next(Instant after) {
		if (this.every != null) {
			long period = this.every.toMillis();
			long millis = after.toEpochMilli();
			long next = Math.floorDiv(millis, period) * period + period;
			return Instant.ofEpochMilli(next);
		}
		ZonedDateTime next = this.expression.next(after.atZone(this.zone));
		return (next != null) ? next.toInstant() : null;
	}

	/**
	 * @return the cron expression, or {@code null} for a period
	 */
	public @Nullable String cronExpression() {
		return this.cron;
	}

	/**
	 * @return the period, or {@code null} for a cron expression
	 */
	public @Nullable Duration period() {
		return this.every;
	}

	/**
	 * @return the zone of the cron expression (UTC for a period)
	 */
	public ZoneId zone() {
		return this.zone;
	}

	/**
	 * @return what happens to missed occurrences
	 */
	public MissedOccurrences missed() {
		return this.missed;
	}

	/**
	 * @return how late an occurrence may be reached and still count as on time
	 */
	public Duration grace() {
		return this.grace;
	}

	@Override
	public String toString() {
		return (this.cron != null) ? "cron '" + this.cron + "' in " + this.zone : "every " + this.every;
	}

}
