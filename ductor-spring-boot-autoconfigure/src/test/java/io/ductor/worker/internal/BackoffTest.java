package io.ductor.worker.internal;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class BackoffTest {

	private final Backoff backoff = new Backoff(Duration.ofMillis(100), Duration.ofSeconds(1), 2.0);

	@Test
	void eachDelayIsBetweenHalfAndAllOfAnExponentiallyGrowingCappedCeiling() {
		long[] ceilings = { 100, 200, 400, 800, 1000, 1000 };
		for (int retry = 1; retry <= ceilings.length; retry++) {
			for (int sample = 0; sample < 200; sample++) {
				long millis = this.backoff.delay(retry).toMillis();
				assertThat(millis).as("retry %d", retry).isBetween(ceilings[retry - 1] / 2, ceilings[retry - 1]);
			}
		}
	}

	@Test
	void delaysAreJitteredSoRetriesSpreadOut() {
		assertThat(java.util.stream.IntStream.range(0, 100).mapToObj((i) -> this.backoff.delay(3)).distinct().count())
			.isGreaterThan(50);
	}

	@Test
	void hugeRetryNumbersStayAtTheCap() {
		assertThat(this.backoff.delay(10_000)).isBetween(Duration.ofMillis(500), Duration.ofSeconds(1));
	}

}
