package io.ductor.reliability;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.awaitility.Awaitility;
import io.ductor.reliability.workload.WorkloadSchema;
import io.ductor.test.PostgresExtension;
import io.ductor.test.TestDatabases;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Connection faults: while the workload runs, every one of its connections (pool,
 * notification listener) is terminated with {@code pg_terminate_backend} every few
 * seconds. Nothing may be lost and everything must recover by itself.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ConnectionFaultTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	static Path directory;

	static Workload workload;

	static OrderClient orders;

	@BeforeAll
	static void launch() throws Exception {
		directory = Report.directory("connection-faults");
		WorkloadSchema.create(postgres.dataSource());
		workload = Workload.launch(directory, postgres.database(), "faults", 0, Workload.freePort());
		workload.awaitReady(Duration.ofSeconds(90));
		orders = new OrderClient("faults", () -> List.of(workload));
	}

	@AfterAll
	static void stop() throws Exception {
		if (orders != null) {
			orders.stop();
		}
		if (workload != null) {
			workload.close();
		}
	}

	@Test
	@Order(1)
	void everyConnectionTerminatedAgainAndAgainLosesNothingAndEverythingRecoversByItself() throws Exception {
		Scale scale = Scale.current();
		Invariants invariants = new Invariants(postgres.dataSource());
		List<Duration> recoveries = new ArrayList<>();
		List<Duration> listenerBack = new ArrayList<>();
		long terminated = 0;
		long start = System.nanoTime();
		for (int fault = 1; fault <= scale.connectionFaults(); fault++) {
			// not a wait: the workload runs between connection faults
			Thread.sleep(scale.faultInterval().toMillis());
			Progress progress = new Progress(invariants, orders);
			long at = System.nanoTime();
			int killed = TestDatabases.terminateConnections(postgres.database(),
					Workload.APPLICATION_NAME_PREFIX + "%");
			assertThat(killed).as("connections terminated by fault " + fault).isPositive();
			terminated += killed;
			recoveries.add(progress.await(at, Duration.ofSeconds(60), "connection fault " + fault));
			listenerBack.add(awaitListener(at));
		}
		assertThat(workload.isAlive()).isTrue();
		orders.stop();
		workload.quiesce();
		Duration drained = invariants.awaitDrained(Duration.ofSeconds(60));
		Map<String, Object> figures = invariants.check(directory, orders);
		new Report("Connection faults").parameter("faults", scale.connectionFaults())
			.parameter("interval", scale.faultInterval().toSeconds() + " s")
			.parameter("fault", "pg_terminate_backend of every workload connection (pool and LISTEN connection)")
			.parameter("workload", "1 instance, 2 ticker threads on 4 runs, 1 order client")
			.figure("faults survived", scale.connectionFaults())
			.figure("backends terminated", terminated)
			.figure("duration", Report.millis(Duration.ofNanos(System.nanoTime() - start)))
			.figure("fault to next tick, effect and answered request", Report.spread(recoveries))
			.figure("fault to notification listener listening again", Report.spread(listenerBack))
			.figure("drain after the last fault", Report.millis(drained))
			.figure("application restarts needed", 0)
			.figures(figures)
			.write();
	}

	private Duration awaitListener(long since) throws InterruptedException {
		Awaitility.await("notification listener back")
			.atMost(Duration.ofSeconds(30))
			.pollDelay(Duration.ZERO)
			.pollInterval(Duration.ofMillis(25))
			.until(() -> {
				String status = workload.getBody("/wl/status");
				return status != null && status.contains("\"listenerConnected\":true") && postgres.dataSource() != null
						&& listening();
			});
		return Duration.ofNanos(System.nanoTime() - since);
	}

	/** The listener's connection is back in pg_stat_activity, listening. */
	private boolean listening() {
		return new Invariants(postgres.dataSource()).count("""
				SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()
				AND application_name LIKE 'ductor-wl-%' AND query LIKE 'LISTEN%'""") > 0;
	}

	@Test
	@Order(2)
	void healthReportsDownDuringFaultsAndUpAfterThem() throws Exception {
		Health.assumeContributor(workload);
		boolean down = false;
		long end = System.nanoTime() + Duration.ofSeconds(10).toNanos();
		while (!down && System.nanoTime() < end) {
			TestDatabases.terminateConnections(postgres.database(), Workload.APPLICATION_NAME_PREFIX + "%");
			down = "DOWN".equals(Health.status(workload));
		}
		assertThat(down).as("ductor health reported DOWN while its connections were being terminated").isTrue();
		Duration up = Health.awaitUp(workload, Duration.ofSeconds(60));
		new Report("Connection faults - health").figure("DOWN seen during faults", down)
			.figure("UP again after the faults", Report.millis(up))
			.write();
	}

}
