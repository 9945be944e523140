package io.ductor.worker.internal;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

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

}
