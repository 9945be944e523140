package io.ductor.autoconfigure.internal;

import java.time.Duration;

/**
 * The checks every Ductor configuration properties type runs when it is bound. Each
 * failure is an {@link IllegalArgumentException} whose message names the property and the
 * bad value. Not an API for applications.
 */
public final class PropertyChecks {

	/** The longest duration a property takes: 36500 days, 100 years. */
	public static final Duration MAX_DURATION = Duration.ofDays(36_500);

	private PropertyChecks() {
	}

	public static void requireAtLeastOne(String property, int value) {
		if (value < 1) {
			throw new IllegalArgumentException(property + " must be at least 1 but was " + value);
		}
	}

	public static void requireBetween(String property, int value, int min, int max) {
		if (value < min || value > max) {
			throw new IllegalArgumentException(
					property + " must be between " + min + " and " + max + " but was " + value);
		}
	}

	/**
	 * Checks that {@code value} is positive and at most {@link #MAX_DURATION}.
	 */
	public static void requirePositive(String property, Duration value) {
		if (value.isNegative() || value.isZero()) {
			throw new IllegalArgumentException(property + " must be positive but was " + value);
		}
		requireAtMostMax(property, value);
	}

	public static void requireAtMostMax(String property, Duration value) {
		if (value.compareTo(MAX_DURATION) > 0) {
			String forEver = property.endsWith(".retention")
					? "; to keep rows for ever, set ductor.retention.enabled=false instead" : "";
			throw new IllegalArgumentException(property + " must be at most 36500d (100 years), the longest duration"
					+ " Ductor accepts, but was " + describe(value) + forEver);
		}
	}

	/** A duration as a user would have written it: {@code 3650000d} for whole days. */
	private static String describe(Duration value) {
		boolean wholeDays = value.getNano() == 0 && value.getSeconds() % Duration.ofDays(1).getSeconds() == 0;
		return wholeDays ? value.toDays() + "d" : value.toString();
	}

}
