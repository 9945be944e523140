package io.ductor.effect.internal;

import java.util.Collections;
import java.util.EnumSet;
import java.util.Set;
import java.util.stream.Collectors;

import io.ductor.effect.EffectStatus;
import io.ductor.internal.DbValues;

/**
 * The sets of intent statuses that Ductor's statements name, each in one place, and their
 * SQL: {@code IN } followed by a constant here reads the set as literals, so even a
 * generic plan can match a partial index whose predicate lists the same statuses.
 */
public final class IntentStatuses {

	/** Finished for good: nothing moves the intent again, and retention may delete it. */
	public static final Set<EffectStatus> FINISHED = of(EffectStatus.COMPLETED, EffectStatus.CANCELLED);

	/**
	 * Not finished: the intent may still run, or waits for an operator. A live intent
	 * holds up the later intents of its ordering key and is a live occurrence of its
	 * alarm.
	 */
	public static final Set<EffectStatus> LIVE = complement(FINISHED);

	/** Parked for an operator: failed, or waiting for a decision. */
	public static final Set<EffectStatus> PARKED = of(EffectStatus.FAILED, EffectStatus.NEEDS_DECISION);

	/**
	 * Live and not in flight: the statuses that the column {@code queue_status} always
	 * holds (an intent in flight only while its lease or its key or alarm needs it).
	 */
	public static final Set<EffectStatus> WAITING = minus(LIVE, EffectStatus.IN_FLIGHT);

	/** Live and no longer pending: running, or parked after it ran. */
	public static final Set<EffectStatus> STARTED = minus(LIVE, EffectStatus.PENDING);

	/**
	 * The attempts of an intent in one of these may yet reach its receiver: a
	 * compensation waits while the intent it undoes is in one.
	 */
	public static final Set<EffectStatus> MAY_STILL_RUN = minus(LIVE, EffectStatus.FAILED);

	/**
	 * The statuses an intent leaves for good or for an operator: its finish is recorded.
	 */
	public static final Set<EffectStatus> ENDED = of(EffectStatus.COMPLETED, EffectStatus.FAILED,
			EffectStatus.CANCELLED);

	/** {@link #FINISHED} as an SQL list. */
	public static final String FINISHED_SQL = sql(FINISHED);

	/** {@link #LIVE} as an SQL list. */
	public static final String LIVE_SQL = sql(LIVE);

	/** {@link #PARKED} as an SQL list. */
	public static final String PARKED_SQL = sql(PARKED);

	/** {@link #WAITING} as an SQL list. */
	public static final String WAITING_SQL = sql(WAITING);

	/** {@link #STARTED} as an SQL list. */
	public static final String STARTED_SQL = sql(STARTED);

	/** {@link #MAY_STILL_RUN} as an SQL list. */
	public static final String MAY_STILL_RUN_SQL = sql(MAY_STILL_RUN);

	/** {@link #ENDED} as an SQL list. */
	public static final String ENDED_SQL = sql(ENDED);

	private IntentStatuses() {
	}

	/**
	 * @param statuses some statuses
	 * @return them as the SQL list of their stored values, in the order of the enum:
	 * {@code ('failed', 'needs_decision')}
	 */
	public static String sql(Set<EffectStatus> statuses) {
		return EnumSet.copyOf(statuses)
			.stream()
			.map((status) -> "'" + DbValues.of(status) + "'")
			.collect(Collectors.joining(", ", "(", ")"));
	}

	private static Set<EffectStatus> of(EffectStatus first, EffectStatus... rest) {
		return Collections.unmodifiableSet(EnumSet.of(first, rest));
	}

	private static Set<EffectStatus> complement(Set<EffectStatus> statuses) {
		return Collections.unmodifiableSet(EnumSet.complementOf(EnumSet.copyOf(statuses)));
	}

	private static Set<EffectStatus> minus(Set<EffectStatus> statuses, EffectStatus left) {
		EnumSet<EffectStatus> set = EnumSet.copyOf(statuses);
		set.remove(left);
		return Collections.unmodifiableSet(set);
	}

}
