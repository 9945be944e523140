package io.ductor.worker.internal;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

class PeriodicWorkerTest {

	private final DuctorThreads threads = new DuctorThreads(false, Duration.ofSeconds(5));

	@AfterEach
	void closeThreads() {
		this.threads.close();
	}

	@Test
	void runsAtStartAndEveryIntervalAndRecordsItsRounds() throws Exception {
		CountDownLatch threeRounds = new CountDownLatch(3);
		PeriodicWorker worker = new PeriodicWorker(this.threads, "test", Duration.ofMillis(20), () -> {
			threeRounds.countDown();
			return false;
		}, io.ductor.observation.internal.DuctorInstrumentation.NOOP);
		worker.start();
		try {
			assertThat(threeRounds.await(5, TimeUnit.SECONDS)).isTrue();
			assertThat(worker.status().running()).isTrue();
			assertThat(worker.status().rounds()).isGreaterThanOrEqualTo(2);
			assertThat(worker.status().lastCompletedAt()).isNotNull();
		}
		finally {
			worker.stop();
		}
		assertThat(worker.isRunning()).isFalse();
	}

	@Test
	void aFailingRoundIsRecordedAndTheWorkerKeepsGoing() throws Exception {
		AtomicInteger calls = new AtomicInteger();
		CountDownLatch recovered = new CountDownLatch(1);
		PeriodicWorker worker = new PeriodicWorker(this.threads, "flaky", Duration.ofMillis(10), () -> {
			if (calls.incrementAndGet() == 1) {
				throw new IllegalStateException("database down");
			}
			recovered.countDown();
			return false;
		}, io.ductor.observation.internal.DuctorInstrumentation.NOOP);
		worker.start();
		try {
			assertThat(recovered.await(5, TimeUnit.SECONDS)).isTrue();
			assertThat(worker.status().lastError()).isEqualTo("database down");
			assertThat(worker.status().lastFailedAt()).isNotNull();
		}
		finally {
			worker.stop();
		}
	}

	@Test
	void moreWorkRunsAgainAtOnceAndTriggerCutsTheWait() throws Exception {
		AtomicInteger backlog = new AtomicInteger(5);
		CountDownLatch drained = new CountDownLatch(1);
		CountDownLatch triggered = new CountDownLatch(1);
		PeriodicWorker worker = new PeriodicWorker(this.threads, "drain", Duration.ofHours(1), () -> {
			int left = backlog.decrementAndGet();
			if (left == 0) {
				drained.countDown();
			}
			if (left < 0) {
				triggered.countDown();
			}
			return left > 0;
		}, io.ductor.observation.internal.DuctorInstrumentation.NOOP);
		worker.start();
		try {
			// an hour-long interval: only "more work" can drain the backlog, only
			// trigger() can run it again
			assertThat(drained.await(5, TimeUnit.SECONDS)).isTrue();
			worker.trigger();
			assertThat(triggered.await(5, TimeUnit.SECONDS)).isTrue();
		}
		finally {
			worker.stop();
		}
	}

	@Test
	void stopWaitsForTheRunningRound() throws Exception {
		CountDownLatch inRound = new CountDownLatch(1);
		AtomicInteger finished = new AtomicInteger();
		PeriodicWorker worker = new PeriodicWorker(this.threads, "slow", Duration.ofHours(1), () -> {
			inRound.countDown();
			Thread.sleep(200);
			finished.incrementAndGet();
			return false;
		}, io.ductor.observation.internal.DuctorInstrumentation.NOOP);
		worker.start();
		assertThat(inRound.await(5, TimeUnit.SECONDS)).isTrue();
		worker.stop();
		assertThat(finished).hasValue(1);
	}

	@Test
	void aRoundAskedForOnAnotherThreadWaitsForTheScheduledRoundUnderWay() throws Exception {
		CountDownLatch scheduledStarted = new CountDownLatch(1);
		CountDownLatch release = new CountDownLatch(1);
		AtomicInteger inside = new AtomicInteger();
		AtomicInteger mostInside = new AtomicInteger();
		AtomicInteger rounds = new AtomicInteger();
		PeriodicWorker worker = new PeriodicWorker(this.threads, "serial", Duration.ofHours(1), () -> {
			mostInside.accumulateAndGet(inside.incrementAndGet(), Math::max);
			try {
				if (rounds.incrementAndGet() == 1) {
					scheduledStarted.countDown();
					release.await(10, TimeUnit.SECONDS);
				}
			}
			finally {
				inside.decrementAndGet();
			}
			return false;
		}, io.ductor.observation.internal.DuctorInstrumentation.NOOP);
		worker.start();
		try {
			assertThat(scheduledStarted.await(5, TimeUnit.SECONDS)).isTrue();
			Thread asked = new Thread(worker::runRound);
			asked.start();
			// the asked round is blocked until the scheduled one ends
			await().atMost(Duration.ofSeconds(5)).until(() -> asked.getState() == Thread.State.WAITING);
			assertThat(rounds).hasValue(1);
			release.countDown();
			asked.join(5_000);
			assertThat(rounds).hasValue(2);
			assertThat(mostInside).hasValue(1);
		}
		finally {
			release.countDown();
			worker.stop();
		}
	}

}
