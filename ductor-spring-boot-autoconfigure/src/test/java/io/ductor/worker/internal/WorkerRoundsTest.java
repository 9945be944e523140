package io.ductor.worker.internal;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import io.ductor.metrics.internal.DuctorObserver;

import static org.assertj.core.api.Assertions.assertThat;

/** The round statistics every worker keeps, without a database. */
class WorkerRoundsTest {

	private final List<String> told = new ArrayList<>();

	private final WorkerRounds rounds = new WorkerRounds("sweeper", new DuctorObserver() {

		@Override
		public void workerRound(String worker, boolean success) {
			WorkerRoundsTest.this.told.add(worker + ":" + success);
		}

	});

	@Test
	void aWorkerThatNeverRanHasNothingToReport() {
		WorkerStatus status = this.rounds.status(false, Duration.ofSeconds(30));
		assertThat(status)
			.isEqualTo(new WorkerStatus("sweeper", false, Duration.ofSeconds(30), null, 0, null, null, null));
		assertThat(this.told).isEmpty();
	}

	@Test
	void everyRoundIsCountedAndToldWithItsOutcome() {
		Instant before = Instant.now();
		this.rounds.started();
		this.rounds.succeeded();
		this.rounds.failed(new IllegalStateException("database away"));
		this.rounds.succeeded();
		WorkerStatus status = this.rounds.status(true, Duration.ofSeconds(1));
		assertThat(status.name()).isEqualTo("sweeper");
		assertThat(status.running()).isTrue();
		assertThat(status.interval()).isEqualTo(Duration.ofSeconds(1));
		assertThat(status.rounds()).isEqualTo(3);
		assertThat(status.startedAt()).isAfterOrEqualTo(before);
		assertThat(status.lastCompletedAt()).isAfterOrEqualTo(status.lastFailedAt());
		assertThat(status.lastFailedAt()).isAfterOrEqualTo(status.startedAt());
		assertThat(status.lastError()).isEqualTo("database away");
		assertThat(this.told).containsExactly("sweeper:true", "sweeper:false", "sweeper:true");
	}

	@Test
	void aFailureWithoutAMessageIsReportedAsNull() {
		this.rounds.failed(new NullPointerException());
		assertThat(this.rounds.status(true, Duration.ofSeconds(1)).lastError()).isEqualTo("null");
	}

}
