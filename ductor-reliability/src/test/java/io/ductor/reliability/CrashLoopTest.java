package io.ductor.reliability;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.awaitility.Awaitility;
import org.awaitility.core.ConditionTimeoutException;
import io.ductor.reliability.workload.WorkloadSchema;
import io.ductor.test.PostgresExtension;
import io.ductor.test.TestDatabase;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Crash loop: the workload ticks, records effects and answers idempotent requests
 * continuously while the driver kills its JVM with SIGKILL at random moments and starts
 * it again.
 */
class CrashLoopTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	@Test
	void killedAgainAndAgainTheWorkloadLosesNoTransitionNoIntentAndNoDecision() throws Exception {
		Scale scale = Scale.current();
		TestDatabase database = postgres.database();
		Path directory = Report.directory("crash-loop");
		WorkloadSchema.create(postgres.dataSource());
		Invariants invariants = new Invariants(postgres.dataSource());
		Random random = new Random(20240601L);
		int port = Workload.freePort();
		AtomicReference<Workload> current = new AtomicReference<>();
		List<Duration> restarts = new ArrayList<>();
		List<Duration> recoveries = new ArrayList<>();
		long start = System.nanoTime();
		int kills = 0;
		Workload workload = Workload.launch(directory, database, "crash", 0, port);
		try (OrderClient orders = new OrderClient("crash", () -> {
			Workload w = current.get();
			return (w != null) ? List.of(w) : List.of();
		})) {
			workload.awaitReady(Duration.ofSeconds(90));
			current.set(workload);
			for (int kill = 1; kill <= scale.kills(); kill++) {
				// let it work for a random while, so the kill lands anywhere: in a tick,
				// a dispatch, a request
				Thread.sleep(700 + random.nextInt(1800));
				current.set(null);
				workload.kill();
				kills++;
				long killedAt = System.nanoTime();
				long transitionsAtKill = invariants.count("SELECT count(*) FROM eec_run_transition");
				long appliedAtKill = invariants.count("SELECT count(*) FROM wl_dedup_receiver");
				workload = Workload.launch(directory, database, "crash", kill, port);
				restarts.add(workload.awaitReady(Duration.ofSeconds(90)));
				current.set(workload);
				// recovered: the restarted instance applies new ticks and its effects
				// reach the receiver
				Awaitility.await("progress after kill " + kill)
					.atMost(Duration.ofSeconds(60))
					.pollDelay(Duration.ZERO)
					.pollInterval(Duration.ofMillis(50))
					.until(() -> invariants.count("SELECT count(*) FROM eec_run_transition") > transitionsAtKill
							&& invariants.count("SELECT count(*) FROM wl_dedup_receiver") > appliedAtKill);
				recoveries.add(Duration.ofNanos(System.nanoTime() - killedAt));
			}
			// not a wait: the last instance runs a while before the orders stop
			Thread.sleep(1000);
			orders.stop();
			workload.quiesce();
			Duration drained = invariants.awaitDrained(Duration.ofSeconds(120));
			Map<String, Object> figures = invariants.check(directory, orders);
			new Report("Crash loop").parameter("kills (SIGKILL)", scale.kills())
				.parameter("time between kills", "0.7 to 2.5 s, random (seed 20240601)")
				.parameter("workload", "2 ticker threads on 4 runs, 1 order client, effects answer 3 ms after applying")
				.parameter("lease / reconciler", "3 s / 500 ms")
				.figure("kills survived", kills)
				.figure("duration", Report.millis(Duration.ofNanos(System.nanoTime() - start)))
				.figure("restart to ready (JVM start)", Report.spread(restarts))
				.figure("kill to first new tick and effect applied", Report.spread(recoveries))
				.figure("drain after the last kill", Report.millis(drained))
				.figures(figures)
				.write();
			assertThat(kills).isEqualTo(scale.kills());
		}
		finally {
			workload.close();
		}
	}

}
