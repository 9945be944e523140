package io.ductor.modulithapp;

import java.time.Duration;

import javax.sql.DataSource;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.modulith.test.AssertablePublishedEvents;
import org.springframework.modulith.test.EnableScenarios;
import org.springframework.modulith.test.PublishedEventsExtension;
import org.springframework.modulith.test.Scenario;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import io.ductor.modulith.ModulithPublications;
import io.ductor.modulithapp.order.OrderPlaced;
import io.ductor.modulithapp.order.Orders;
import io.ductor.test.PostgresExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Modulith's own test support ({@link Scenario}, {@code PublishedEvents}) on an
 * application whose publications Ductor records and runs.
 */
@SpringBootTest(classes = ModulithApp.class)
// closed with the class, before the JVM exits with its database dropped
@DirtiesContext
@EnableScenarios
@ExtendWith(PublishedEventsExtension.class)
class ModulithTestSupportTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	@DynamicPropertySource
	static void database(DynamicPropertyRegistry registry) {
		for (String property : postgres.database().springProperties()) {
			String[] pair = property.split("=", 2);
			registry.add(pair[0], () -> pair[1]);
		}
		for (String property : ModulithApp.PROPERTIES) {
			String[] pair = property.split("=", 2);
			registry.add(pair[0], () -> pair[1]);
		}
	}

	@BeforeAll
	static void schema(DataSource dataSource) {
		JdbcClient.create(dataSource).sql(ModulithApp.SCHEMA).update();
	}

	@Autowired
	JdbcClient jdbc;

	@Autowired
	Orders orders;

	@Test
	void aScenarioPublishingAnOrderSeesStockReservedOnceThroughDuctor(Scenario scenario) {
		scenario.publish(new OrderPlaced("scenario-1"))
			.customize((when) -> when.atMost(Duration.ofSeconds(20)))
			.andWaitForStateChange(() -> this.jdbc.sql("""
					SELECT r.publication_key FROM stock_reservation r
					JOIN eec_effect_intent i ON i.idempotency_key = r.publication_key AND i.status = 'completed'
					WHERE r.order_id = 'scenario-1'""").query(String.class).optional().orElse(null))
			.andVerify((key) -> assertThat(this.jdbc.sql("SELECT count(*) FROM stock_reservation WHERE order_id = ?")
				.param("scenario-1")
				.query(Integer.class)
				.single()).isEqualTo(1));
	}

	@Test
	void publishedEventsSeeTheEventAndItsPublicationIsRecordedWithTheOrder(AssertablePublishedEvents events) {
		this.orders.place("published-1");
		assertThat(events).contains(OrderPlaced.class).matching(OrderPlaced::id, "published-1");
		assertThat(this.jdbc.sql("SELECT effect_name FROM eec_effect_intent WHERE payload->3->>'id' = 'published-1'")
			.query(String.class)
			.list()).containsExactly(ModulithPublications.EFFECT_NAME);
	}

}
