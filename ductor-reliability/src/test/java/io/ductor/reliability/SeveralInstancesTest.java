package io.ductor.reliability;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.ductor.reliability.workload.WorkloadSchema;
import io.ductor.test.PostgresExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Several instances: up to three workload JVMs on one database, all ticking the same
 * runs, all draining, reconciling, sweeping and purging, with no crash: no lost update,
 * no duplicate dispatch (the raw receiver must see each call once), and the throughput
 * per instance count.
 */
class SeveralInstancesTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	@Test
	void instancesRacingOnOneDatabaseLoseNoUpdateAndNeverDispatchTwice() throws Exception {
		Scale scale = Scale.current();
		Path directory = Report.directory("several-instances");
		WorkloadSchema.create(postgres.dataSource());
		Invariants db = new Invariants(postgres.dataSource());
		List<Workload> instances = new CopyOnWriteArrayList<>();
		Report report = new Report("Several instances")
			.parameter("instances",
					"1, then 2" + ((scale.maxInstances() > 2) ? ", then 3" : "")
							+ " JVMs on one database, the same 4 runs")
			.parameter("measuring window per instance count", scale.instanceWindow().toSeconds() + " s")
			.parameter("workload per instance", "2 ticker threads; 1 order client spread over the instances")
			.parameter("workers", "drainer, reconciler (500 ms), sweeper (2 s), retention (1 s, effects kept 3 s)");
		List<String> throughput = new ArrayList<>();
		try (OrderClient orders = new OrderClient("multi", () -> instances)) {
			for (int n = 1; n <= scale.maxInstances(); n++) {
				Workload instance = Workload.launch(directory, postgres.database(), "i" + n, 0, Workload.freePort(),
						"ductor.effects.retention=3s", "ductor.retention.interval=1s");
				instance.awaitReady(Duration.ofSeconds(90));
				instances.add(instance);
				Thread.sleep(1000); // let the newcomer warm up
				long ticks = db.count("SELECT count(*) FROM eec_run_transition");
				long effects = db.count("SELECT count(*) FROM wl_dedup_receiver");
				long answered = orders.answered.size();
				long conflicts = conflicts(instances);
				long start = System.nanoTime();
				// not a wait: the sampled window the throughput is measured over
				Thread.sleep(scale.instanceWindow().toMillis());
				double seconds = (System.nanoTime() - start) / 1e9;
				String line = "%d instance(s): %.0f ticks/s, %.0f effects applied/s, %.1f idempotent requests/s"
					.formatted(n, (db.count("SELECT count(*) FROM eec_run_transition") - ticks) / seconds,
							(db.count("SELECT count(*) FROM wl_dedup_receiver") - effects) / seconds,
							(orders.answered.size() - answered) / seconds);
				throughput.add(line);
				report.figure("throughput with " + n + " instance(s)", line.substring(line.indexOf(':') + 2));
			}
			orders.stop();
			for (Workload instance : instances) {
				instance.quiesce();
			}
			Duration drained = db.awaitDrained(Duration.ofSeconds(60));
			Thread.sleep(4500); // retention gets its turn at the completed intents
			Map<String, Object> figures = db.check(directory, orders);
			report.figure("drain after the load", Report.millis(drained))
				.figure("completed intents purged by retention while instances raced",
						(Long) figures.get("effects applied at the deduplicating receiver")
								- (Long) figures.get("intents"))
				.figure("ticks that failed in the workload (conflicts given up, reported)", conflicts(instances))
				.figures(figures)
				.write();
			assertThat((Long) figures.get("duplicates at the raw receiver (reported)"))
				.as("without crashes no call is dispatched twice")
				.isZero();
		}
		finally {
			for (Workload instance : instances) {
				instance.close();
			}
		}
	}

	private static long conflicts(List<Workload> instances) {
		long failed = 0;
		for (Workload instance : instances) {
			String status = instance.getBody("/wl/status");
			if (status != null) {
				int at = status.indexOf("\"ticksFailed\":");
				failed += Long.parseLong(status.substring(at + 14).split("[,}]")[0]);
			}
		}
		return failed;
	}

}
