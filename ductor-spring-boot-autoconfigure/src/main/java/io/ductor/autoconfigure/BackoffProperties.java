package io.ductor.autoconfigure;

import java.time.Duration;

import org.jspecify.annotations.Nullable;

import io.ductor.autoconfigure.internal.PropertyChecks;

/**
 * An exponential backoff: the n-th wait is a random time between half and all of
 * {@code min(max, initial * multiplier^(n-1))}. Each use ({@code ductor.ticks.backoff},
 * {@code ductor.effects.backoff}, {@code ductor.effects.reconciliation.backoff}, an
 * effect's override) has defaults of its own, which fill in what is not set.
 *
 * @param initial Longest first wait.
 * @param max Longest wait. Not shorter than the initial wait.
 * @param multiplier How much the longest wait grows per step. At least 1.
 */
public record BackoffProperties(@Nullable Duration initial, @Nullable Duration max, @Nullable Double multiplier) {

	/**
	 * Returns {@code backoff} (which may be {@code null}, or leave values unset)
	 * completed from {@code defaults}, after checking it.
	 * @param backoff the bound backoff, possibly {@code null}
	 * @param defaults the backoff of this use when nothing is set
	 * @param prefix the property prefix, for the messages of bad values
	 * @return the complete, checked backoff
	 */
	public static BackoffProperties orDefaults(@Nullable BackoffProperties backoff, BackoffProperties defaults,
			String prefix) {
		BackoffProperties complete = (backoff != null)
				? new BackoffProperties((backoff.initial != null) ? backoff.initial : defaults.initial,
						(backoff.max != null) ? backoff.max : defaults.max,
						(backoff.multiplier != null) ? backoff.multiplier : defaults.multiplier)
				: defaults;
		complete.check(prefix);
		return complete;
	}

	private void check(String prefix) {
		PropertyChecks.requirePositive(prefix + ".initial", this.initial);
		PropertyChecks.requireAtMostMax(prefix + ".max", this.max);
		if (this.max.compareTo(this.initial) < 0) {
			throw new IllegalArgumentException(prefix + ".max must not be shorter than " + prefix + ".initial ("
					+ this.initial + ") but was " + this.max);
		}
		if (!(this.multiplier >= 1.0) || Double.isInfinite(this.multiplier)) {
			throw new IllegalArgumentException(prefix + ".multiplier must be at least 1 but was " + this.multiplier);
		}
	}

}
