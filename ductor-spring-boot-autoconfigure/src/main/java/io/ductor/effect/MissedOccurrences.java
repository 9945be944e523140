package io.ductor.effect;

/**
 * What a recurring alarm does with occurrences it missed: those more than the alarm's
 * grace past their instant when the scheduler gets to them (every instance was down, or
 * the scheduler was off). Occurrences within the grace are on time and are always
 * recorded.
 */
public enum MissedOccurrences {

	/**
	 * The missed occurrences run once, as one occurrence keyed by the first missed
	 * instant (the default).
	 */
	RUN_ONCE,

	/**
	 * Every missed occurrence runs, each with its own key, oldest first, up to the newest
	 * 1,000 missed occurrences of the alarm: older ones are skipped, with a warning that
	 * names the alarm and how many it skipped.
	 */
	RUN_EACH,

	/**
	 * Missed occurrences are not recorded; the alarm goes on with its next occurrence.
	 */
	SKIP

}
