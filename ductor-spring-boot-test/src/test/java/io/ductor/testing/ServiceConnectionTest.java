package io.ductor.testing;

import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIf;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.postgresql.PostgreSQLContainer;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.testcontainers.service.connection.ServiceConnection;

import io.ductor.testing.bakery.Bakery;

/**
 * With Boot's {@code @ServiceConnection} on a Testcontainers PostgreSQL, when a Docker
 * engine answers.
 */
@SpringBootTest(classes = Bakery.class)
@AutoConfigureDuctorTester
@EnabledIf(value = "dockerAnswers",
		disabledReason = "No Docker engine answers (no DOCKER_HOST, no /var/run/docker.sock,"
				+ " or Testcontainers cannot reach it): the @ServiceConnection test needs one")
class ServiceConnectionTest {

	@ServiceConnection
	static final PostgreSQLContainer postgres = new PostgreSQLContainer("postgres:17-alpine");

	@Autowired
	Bakery.Orders orders;

	@Autowired
	DuctorTester ductor;

	static boolean dockerAnswers() {
		boolean hint = System.getenv("DOCKER_HOST") != null || Files.exists(Path.of("/var/run/docker.sock"));
		if (hint && DockerClientFactory.instance().isDockerAvailable()) {
			postgres.start();
			return true;
		}
		return false;
	}

	@Test
	void runsOnTheContainer() {
		this.orders.place("8", 800);
		this.ductor.drain();
		this.ductor.assertEffects().hasOne("payment.charge").isCompleted();
		this.ductor.assertRun("8").isCompleted();
	}

}
