package io.ductor.effect.internal;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The completion probes the digested form of a compensation's key only for keys of
 * {@link IntentOutcomes#DIGESTED_KEY_MIN_CHARS} characters or more: no shorter key may
 * have a digested compensation key, whatever its characters.
 */
class DigestedCompensationKeyTest {

	@Test
	void noKeyShorterThanTheProbedLengthHasADigestedCompensationKey() {
		int below = IntentOutcomes.DIGESTED_KEY_MIN_CHARS - 1;
		// the widest characters: two UTF-16 units each
		assertThat(Compensations.derived("\uD83D\uDE9A".repeat(below))).doesNotContain("sha256:");
		assertThat(Compensations.derived("k".repeat(below))).doesNotContain("sha256:");
	}

	@Test
	void aKeyOfTheProbedLengthMayHaveOne() {
		assertThat(Compensations.derived("\uD83D\uDE9A".repeat(IntentOutcomes.DIGESTED_KEY_MIN_CHARS)))
			.startsWith(Compensations.PREFIX + "sha256:");
	}

}
