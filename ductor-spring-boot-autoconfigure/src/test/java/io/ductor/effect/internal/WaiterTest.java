package io.ductor.effect.internal;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

/** The claim thread's waiter keeps a wake-up that arrives while nobody waits. */
class WaiterTest {

	private static final long AN_HOUR = TimeUnit.HOURS.toNanos(1);

	private final Waiter waiter = new Waiter();

	@Test
	void aWakeUpBeforeTheWaitEndsTheNextWaitOnlyOnce() {
		this.waiter.wake();
		assertTimeoutPreemptively(Duration.ofSeconds(10),
				() -> assertThat(this.waiter.await(AN_HOUR, () -> false)).isTrue());
		// consumed: the wait after it lasts its time
		assertThat(this.waiter.await(TimeUnit.MILLISECONDS.toNanos(1), () -> false)).isTrue();
	}

	@Test
	void aWakeUpEndsAWaitInProgress() throws Exception {
		AtomicBoolean returned = new AtomicBoolean();
		Thread waiting = new Thread(() -> returned.set(this.waiter.await(AN_HOUR, () -> false)));
		waiting.start();
		while (waiting.getState() != Thread.State.TIMED_WAITING) {
			Thread.onSpinWait();
		}
		this.waiter.wake();
		waiting.join(10_000);
		assertThat(waiting.isAlive()).isFalse();
		assertThat(returned).isTrue();
	}

	@Test
	void aWaitIsSkippedWhenTheCallerIsStopping() {
		assertTimeoutPreemptively(Duration.ofSeconds(10),
				() -> assertThat(this.waiter.await(AN_HOUR, () -> true)).isTrue());
	}

	@Test
	void anInterruptedWaitReportsItAndKeepsTheInterrupt() {
		Thread.currentThread().interrupt();
		try {
			assertThat(this.waiter.await(AN_HOUR, () -> false)).isFalse();
			assertThat(Thread.currentThread().isInterrupted()).isTrue();
		}
		finally {
			Thread.interrupted();
		}
	}

}
