package io.ductor.reliability;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

import org.springframework.jdbc.datasource.SimpleDriverDataSource;

import org.awaitility.Awaitility;
import org.awaitility.core.ConditionTimeoutException;

import io.ductor.reliability.workload.WorkloadSchema;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Database restart: the PostgreSQL server is stopped under load, left down for a while
 * and started again, several times, while the workload keeps running. The server is an
 * embedded PostgreSQL (zonky) of this test's own, with a fixed data directory and port,
 * closed and started again ({@code setCleanDataDirectory(false)}): the shared test server
 * cannot be stopped.
 */
@Tag("long")
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class DatabaseRestartTest {

	static Path directory;

	static Path data;

	static int databasePort;

	static EmbeddedPostgres server;

	static SimpleDriverDataSource dataSource;

	static Workload workload;

	static OrderClient orders;

	@BeforeAll
	static void start() throws Exception {
		directory = Report.directory("database-restart");
		data = directory.resolve("pgdata");
		databasePort = Workload.freePort();
		server = startServer();
		String url = "jdbc:postgresql://localhost:" + databasePort + "/postgres";
		dataSource = new SimpleDriverDataSource(new org.postgresql.Driver(), url, "postgres", "");
		WorkloadSchema.create(dataSource);
		workload = Workload.launch(directory, url, "postgres", null, "restart", 0, Workload.freePort());
		workload.awaitReady(Duration.ofSeconds(90));
		orders = new OrderClient("restart", () -> List.of(workload));
	}

	static EmbeddedPostgres startServer() throws IOException {
		return EmbeddedPostgres.builder()
			.setDataDirectory(data)
			.setCleanDataDirectory(false)
			.setPort(databasePort)
			.setServerConfig("max_connections", "100")
			.setPGStartupWait(Duration.ofSeconds(60))
			.setRegisterShutdownHook(true)
			.start();
	}

	static String serverVersion() {
		return org.springframework.jdbc.core.simple.JdbcClient.create(dataSource)
			.sql("SELECT current_setting('server_version')")
			.query(String.class)
			.single();
	}

	@AfterAll
	static void stop() throws Exception {
		if (orders != null) {
			orders.stop();
		}
		if (workload != null) {
			workload.close();
		}
		if (server != null) {
			server.close();
		}
	}

	@Test
	@Order(1)
	void theServerStoppedAndStartedUnderLoadLosesNothingAndTheApplicationNeverRestarts() throws Exception {
		Scale scale = Scale.current();
		Invariants invariants = new Invariants(dataSource);
		long pid = workload.pid();
		List<Duration> stops = new ArrayList<>();
		List<Duration> starts = new ArrayList<>();
		List<Duration> recoveries = new ArrayList<>();
		long begin = System.nanoTime();
		for (int restart = 1; restart <= scale.databaseRestarts(); restart++) {
			// not a wait: the workload runs on the healthy database between restarts
			Thread.sleep(3000);
			Progress progress = new Progress(invariants, orders);
			long stopping = System.nanoTime();
			server.close();
			server = null;
			stops.add(Duration.ofNanos(System.nanoTime() - stopping));
			// not a wait: the outage itself, as long as the scale says
			Thread.sleep(scale.databaseDown().toMillis());
			long starting = System.nanoTime();
			server = startServer();
			starts.add(Duration.ofNanos(System.nanoTime() - starting));
			recoveries.add(progress.await(starting, Duration.ofSeconds(90), "database restart " + restart));
		}
		assertThat(workload.isAlive()).isTrue();
		assertThat(workload.pid()).isEqualTo(pid);
		orders.stop();
		workload.quiesce();
		Duration drained = invariants.awaitDrained(Duration.ofSeconds(90));
		Map<String, Object> figures = invariants.check(directory, orders);
		new Report("Database restart").server("embedded PostgreSQL " + serverVersion())
			.parameter("restarts", scale.databaseRestarts())
			.parameter("down for", scale.databaseDown().toSeconds() + " s each, after 3 s of load")
			.parameter("server",
					"embedded PostgreSQL of the test's own (zonky), fixed data directory and port, "
							+ "closed (pg_ctl stop -m fast) and started again")
			.parameter("workload",
					"1 instance, 2 ticker threads on 4 runs, 1 order client; Hikari connection-timeout 2 s")
			.figure("restarts survived", scale.databaseRestarts())
			.figure("duration", Report.millis(Duration.ofNanos(System.nanoTime() - begin)))
			.figure("server stop", Report.spread(stops))
			.figure("server start", Report.spread(starts))
			.figure("server up to next tick, effect and answered request", Report.spread(recoveries))
			.figure("drain after the last restart", Report.millis(drained))
			.figure("application restarts needed", "0 (same pid " + pid + ")")
			.figures(figures)
			.write();
	}

	@Test
	@Order(2)
	void healthReportsDownWhileTheServerIsAwayAndUpAfterwards() throws Exception {
		Health.assumeContributor(workload);
		server.close();
		server = null;
		boolean down = true;
		try {
			Awaitility.await("ductor health DOWN")
				.atMost(Duration.ofSeconds(30))
				.pollInterval(Duration.ofMillis(100))
				.until(() -> "DOWN".equals(Health.status(workload)));
		}
		catch (ConditionTimeoutException ex) {
			// asserted below, once the server is back for the tests after this one
			down = false;
		}
		server = startServer();
		assertThat(down).as("ductor health reported DOWN while the server was stopped").isTrue();
		Duration up = Health.awaitUp(workload, Duration.ofSeconds(60));
		new Report("Database restart - health").server("embedded PostgreSQL " + serverVersion())
			.figure("DOWN seen while the server was stopped", down)
			.figure("UP again after the start", Report.millis(up))
			.write();
	}

}
