package io.ductor.sample.modulith.inventory;

import java.time.Duration;

import javax.sql.DataSource;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.context.ApplicationContext;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.modulith.events.CompletedEventPublications;
import org.springframework.modulith.events.EventPublication;
import org.springframework.modulith.test.ApplicationModuleTest;
import org.springframework.modulith.test.Scenario;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import io.ductor.modulith.ModulithPublications;
import io.ductor.sample.modulith.order.OrderCompleted;
import io.ductor.sample.modulith.order.Orders;
import io.ductor.test.PostgresExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The inventory module alone, bootstrapped by Modulith's {@code @ApplicationModuleTest}
 * on PostgreSQL with Ductor: an {@link OrderCompleted} published in a transaction is
 * stored as a Ductor publication for the module's listener, which Ductor's drainer runs
 * and completes. The context is closed with the class ({@code @DirtiesContext}), not when
 * the JVM exits after its database was dropped.
 */
@ApplicationModuleTest
@DirtiesContext
class InventoryModuleTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	@DynamicPropertySource
	static void database(DynamicPropertyRegistry registry) {
		for (String property : postgres.database().springProperties()) {
			String[] pair = property.split("=", 2);
			registry.add(pair[0], () -> pair[1]);
		}
		registry.add("ductor.effects.drainer.poll-interval", () -> "100ms");
	}

	@Autowired
	ApplicationContext context;

	@Autowired
	DataSource dataSource;

	@Autowired
	CompletedEventPublications completed;

	@Test
	void anOrderCompletedElsewhereIsStoredByDuctorAndCompletedByItsDrainer(Scenario scenario) {
		assertThat(this.context.getBeanNamesForType(Orders.class)).as("only the inventory module is bootstrapped")
			.isEmpty();
		JdbcClient jdbc = JdbcClient.create(this.dataSource);
		scenario.publish(new OrderCompleted("module-1", "apple", 3))
			.customize((when) -> when.atMost(Duration.ofSeconds(30)))
			.andWaitForStateChange(() -> jdbc.sql("""
					SELECT i.idempotency_key FROM eec_effect_intent i
					JOIN stock_movement m ON m.publication_key = i.idempotency_key
					WHERE i.effect_name = ? AND i.status = 'completed' AND m.order_id = 'module-1'""")
				.param(ModulithPublications.EFFECT_NAME)
				.query(String.class)
				.optional()
				.orElse(null))
			.andVerify((key) -> {
				assertThat(jdbc.sql("SELECT quantity FROM stock_movement WHERE order_id = 'module-1'")
					.query(Integer.class)
					.list()).containsExactly(-3);
				assertThat(this.completed.findAll()).filteredOn((p) -> key.equals(p.getIdentifier().toString()))
					.singleElement()
					.satisfies((publication) -> {
						assertThat(publication.getStatus()).isEqualTo(EventPublication.Status.COMPLETED);
						assertThat(publication.getEvent()).isEqualTo(new OrderCompleted("module-1", "apple", 3));
					});
			});
	}

}
