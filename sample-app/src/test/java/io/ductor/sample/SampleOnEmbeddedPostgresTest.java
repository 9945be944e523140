package io.ductor.sample;

import java.nio.file.Path;

import javax.sql.DataSource;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.health.actuate.endpoint.HealthEndpoint;
import org.springframework.boot.health.contributor.Status;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.simple.JdbcClient;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The quick start: no spring.datasource.url, so the sample brings its own PostgreSQL and
 * keeps its data; no spring.kafka.bootstrap-servers, so it brings its own Kafka broker,
 * and with one it uses that broker.
 */
class SampleOnEmbeddedPostgresTest {

	@Test
	void startsOnItsOwnPostgresAndKeepsDataAcrossRestarts(@TempDir Path directory) {
		String[] args = { "--server.port=0", "--sample.database.directory=" + directory };
		try (ConfigurableApplicationContext context = SpringApplication.run(SampleApplication.class, args)) {
			assertThat(context.getBeansOfType(EmbeddedPostgres.class)).hasSize(1);
			assertThat(context.getBeansOfType(InProcessKafka.class)).hasSize(1);
			assertThat(context.getBean(HealthEndpoint.class).health().getStatus()).isEqualTo(Status.UP);
			JdbcClient.create(context.getBean(DataSource.class))
				.sql("INSERT INTO eec_run (id, type, state) VALUES ('kept', 'test', '{}')")
				.update();
		}
		String[] withBroker = { args[0], args[1], SampleKafka.argument() };
		try (ConfigurableApplicationContext context = SpringApplication.run(SampleApplication.class, withBroker)) {
			assertThat(context.getBeansOfType(InProcessKafka.class)).isEmpty();
			assertThat(JdbcClient.create(context.getBean(DataSource.class))
				.sql("SELECT count(*) FROM eec_run WHERE id = 'kept'")
				.query(Long.class)
				.single()).isOne();
		}
	}

}
