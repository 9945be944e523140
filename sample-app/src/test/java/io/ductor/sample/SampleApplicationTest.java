package io.ductor.sample;

import org.junit.jupiter.api.Test;

import org.springframework.jdbc.core.simple.JdbcClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The shop on any PostgreSQL given by spring.datasource.url: both migrations ran, health
 * is up.
 */
class SampleApplicationTest extends ShopTestSupport {

	@Test
	void startsRunsTheShopsAndDuctorsMigrationsAndReportsHealthy() {
		ShopClient shop = new ShopClient(port());
		String health = shop.get("/actuator/health").body();
		assertThat(health).contains("\"status\":\"UP\"").contains("\"db\"");
		JdbcClient jdbc = jdbc();
		assertThat(jdbc
			.sql("SELECT count(*) FROM pg_tables WHERE tablename IN"
					+ " ('eec_run', 'eec_run_transition', 'eec_effect_intent', 'eec_routing_idempotency')")
			.query(Long.class)
			.single()).isEqualTo(4);
		assertThat(jdbc.sql("SELECT count(*) FROM flyway_schema_history WHERE success AND version = '1'")
			.query(Long.class)
			.single()).isOne();
		assertThat(jdbc.sql("SELECT count(*) FROM sample_product").query(Long.class).single()).isPositive();
		assertThat(shop.get("/").body()).contains("Ductor sample shop");
		assertThat(shop.get("/actuator/metrics").statusCode()).as("metrics only in the ops profile").isEqualTo(404);
	}

}
