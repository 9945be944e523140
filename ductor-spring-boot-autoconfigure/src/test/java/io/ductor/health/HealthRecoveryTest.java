package io.ductor.health;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.health.contributor.Health;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import io.ductor.effect.EffectOperations;
import io.ductor.effect.EffectOutbox;
import io.ductor.effect.EffectStatus;
import io.ductor.health.internal.DuctorHealthIndicator;
import io.ductor.worker.internal.DuctorThreads;
import io.ductor.worker.internal.PeriodicWorker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The health contributor follows the database and the workers without an application
 * restart: a PostgreSQL server of the test's own is stopped and started again under a
 * running application.
 */
class HealthRecoveryTest {

	@Test
	void healthIsDownWhileTheServerIsStoppedAndUpAgainWhenItReturns(@TempDir Path data) throws Exception {
		int port = freePort();
		EmbeddedPostgres server = start(data, port);
		try (ConfigurableApplicationContext context = application(server.getJdbcUrl("postgres", "postgres"))) {
			DuctorHealthIndicator health = context.getBean(DuctorHealthIndicator.class);
			assertThat(status(health)).isEqualTo("UP");

			server.close();
			await().atMost(Duration.ofSeconds(30)).until(() -> status(health).equals("DOWN"));

			server = start(data, port);
			await().atMost(Duration.ofSeconds(60)).until(() -> status(health).equals("UP"));

			// the drainer recovered by itself too: a new intent is dispatched
			new TransactionTemplate(context.getBean(PlatformTransactionManager.class))
				.executeWithoutResult((status) -> context.getBean(OperationsTest.Effects.class).send("after-restart"));
			EffectOperations operations = context.getBean(EffectOperations.class);
			await().atMost(Duration.ofSeconds(30))
				.until(() -> operations.findByKey("send:after-restart")
					.orElseThrow()
					.status() == EffectStatus.COMPLETED);
		}
		finally {
			server.close();
		}
	}

	@Test
	void aStalledWorkerTurnsHealthDown(@TempDir Path data) throws Exception {
		CountDownLatch release = new CountDownLatch(1);
		StalledWorker.release = release;
		try (EmbeddedPostgres server = start(data, freePort());
				ConfigurableApplicationContext context = application(server.getJdbcUrl("postgres", "postgres"),
						StalledWorker.class)) {
			DuctorHealthIndicator health = context.getBean(DuctorHealthIndicator.class);
			await().atMost(Duration.ofSeconds(30)).until(() -> status(health).equals("DOWN"));
			assertThat(health.health(true).getDetails().get("reasons")).asString().contains("worker 'stuck'");
			release.countDown();
			await().atMost(Duration.ofSeconds(30)).until(() -> status(health).equals("UP"));
		}
		finally {
			release.countDown();
		}
	}

	private static String status(DuctorHealthIndicator health) {
		Health result = health.health(true);
		return result.getStatus().getCode();
	}

	private static ConfigurableApplicationContext application(String url, Class<?>... more) {
		Class<?>[] sources = new Class<?>[more.length + 1];
		sources[0] = OperationsTest.Infrastructure.class;
		System.arraycopy(more, 0, sources, 1, more.length);
		return new SpringApplicationBuilder(sources).web(WebApplicationType.NONE)
			.properties("spring.datasource.url=" + url, "spring.datasource.username=postgres",
					"spring.datasource.hikari.connection-timeout=2000",
					"spring.datasource.hikari.validation-timeout=1000", "ductor.effects.drainer.poll-interval=200ms")
			.run();
	}

	private static EmbeddedPostgres start(Path data, int port) throws IOException {
		return EmbeddedPostgres.builder().setDataDirectory(data).setCleanDataDirectory(false).setPort(port).start();
	}

	private static int freePort() throws IOException {
		try (ServerSocket socket = new ServerSocket(0)) {
			return socket.getLocalPort();
		}
	}

	/** A worker whose rounds never finish until the test releases it. */
	@Configuration(proxyBeanMethods = false)
	@Import(OperationsTest.Infrastructure.class)
	static class StalledWorker {

		static volatile CountDownLatch release;

		@Bean
		PeriodicWorker stuckWorker(DuctorThreads threads) {
			return new PeriodicWorker(threads, "stuck", Duration.ofMillis(100), () -> {
				release.await();
				return false;
			}, io.ductor.observation.internal.DuctorInstrumentation.NOOP);
		}

	}

}
