package io.ductor.sample;

import javax.sql.DataSource;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.web.client.RestClient;

import io.ductor.test.PostgresExtension;

import static org.assertj.core.api.Assertions.assertThat;

@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class SampleApplicationTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	@DynamicPropertySource
	static void database(DynamicPropertyRegistry registry) {
		registry.add("spring.datasource.url", postgres::jdbcUrl);
		registry.add("spring.datasource.username", postgres::username);
		registry.add("spring.datasource.password", () -> (postgres.password() != null) ? postgres.password() : "");
	}

	@LocalServerPort
	int port;

	@Autowired
	DataSource dataSource;

	@Test
	void startsMigratesAndReportsHealthy() {
		String health = RestClient.create("http://localhost:" + this.port)
			.get()
			.uri("/actuator/health")
			.retrieve()
			.body(String.class);
		assertThat(health).contains("\"status\":\"UP\"").contains("\"db\"");
		assertThat(JdbcClient.create(this.dataSource)
			.sql("SELECT count(*) FROM pg_tables WHERE tablename IN"
					+ " ('eec_run', 'eec_run_transition', 'eec_effect_intent', 'eec_routing_idempotency')")
			.query(Long.class)
			.single()).isEqualTo(4);
	}

}
