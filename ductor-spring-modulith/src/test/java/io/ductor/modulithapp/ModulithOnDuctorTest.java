package io.ductor.modulithapp;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import javax.sql.DataSource;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.modulith.events.CompletedEventPublications;
import org.springframework.modulith.events.EventPublication;
import org.springframework.modulith.events.IncompleteEventPublications;
import org.springframework.modulith.events.core.EventPublicationRegistry;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import io.ductor.actuate.internal.DuctorEndpoint;
import io.ductor.effect.EffectIntent;
import io.ductor.modulith.ModulithPublications;
import io.ductor.modulith.internal.DuctorEventPublicationRegistry;
import io.ductor.modulithapp.inventory.Stock;
import io.ductor.modulithapp.order.OrderPlaced;
import io.ductor.modulithapp.order.Orders;
import io.ductor.test.PostgresExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.awaitility.Awaitility.await;

/**
 * The two-module application on PostgreSQL: publications are Ductor intents recorded in
 * the publishing transaction and run by the drainer, and Modulith's publication API reads
 * and moves them.
 */
@SpringBootTest(classes = ModulithApp.class)
// closed with the class, before the JVM exits with its database dropped
@DirtiesContext
class ModulithOnDuctorTest {

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
	Orders orders;

	@Autowired
	Stock stock;

	@Autowired
	JdbcClient jdbc;

	@Autowired
	EventPublicationRegistry registry;

	@Autowired
	CompletedEventPublications completed;

	@Autowired
	IncompleteEventPublications incomplete;

	@Autowired
	DuctorEndpoint endpoint;

	@Test
	void ductorIsTheRegistry() {
		assertThat(this.registry).isInstanceOf(DuctorEventPublicationRegistry.class);
		assertThat(this.completed).isSameAs(this.registry);
	}

	@Test
	void publicationIsRecordedInThePublishingTransactionAndTheListenerRunsOnceWithItsKey() {
		String order = "order-" + UUID.randomUUID();
		this.orders.place(order);
		Map<String, Object> intent = intentOf(order);
		assertThat(intent.get("effect_name")).isEqualTo(ModulithPublications.EFFECT_NAME);
		await().atMost(Duration.ofSeconds(20)).until(() -> "completed".equals(intentOf(order).get("status")));
		String key = (String) intentOf(order).get("idempotency_key");
		assertThat(this.jdbc.sql("SELECT publication_key FROM stock_reservation WHERE order_id = ?")
			.param(order)
			.query(String.class)
			.list()).containsExactly(key);
		// Modulith's own after-commit invocation stood down: one call, by Ductor
		assertThat(this.stock.calls(order)).isEqualTo(1);
		assertThat(this.completed.findAll()).filteredOn((publication) -> order.equals(orderOf(publication)))
			.singleElement()
			.satisfies((publication) -> {
				assertThat(publication.getIdentifier()).hasToString(key);
				assertThat(publication.getStatus()).isEqualTo(EventPublication.Status.COMPLETED);
				assertThat(publication.getCompletionDate()).isPresent();
				assertThat(((org.springframework.modulith.events.core.TargetEventPublication) publication)
					.getTargetIdentifier()
					.getValue()).contains("Stock.on");
			});
	}

	@Test
	void aRolledBackTransactionLeavesNoPublication() {
		String order = "rolled-back-" + UUID.randomUUID();
		assertThatIllegalStateException().isThrownBy(() -> this.orders.placeThenFail(order));
		assertThat(intents(order)).isEmpty();
		assertThat(this.registry.findIncompletePublications()).noneMatch((p) -> order.equals(orderOf(p)));
		assertThat(this.stock.calls(order)).isZero();
	}

	@Test
	void aFailingListenerIsRetriedWithBackoffAndThenCompleted() {
		String order = "flaky-" + UUID.randomUUID();
		this.orders.place(order);
		await().atMost(Duration.ofSeconds(20)).until(() -> "completed".equals(intentOf(order).get("status")));
		Map<String, Object> intent = intentOf(order);
		assertThat(intent.get("attempts")).isEqualTo(3);
		assertThat((String) intent.get("last_error")).contains("the warehouse is busy (call 2)");
		assertThat(this.stock.calls(order)).isEqualTo(3);
		assertThat(reservations(order)).isEqualTo(1);
	}

	@Test
	void afterMaxAttemptsThePublicationFailsShowsInTheEndpointAndAnOperatorRetryRunsIt() {
		String order = "poison-" + UUID.randomUUID();
		this.orders.place(order);
		await().atMost(Duration.ofSeconds(20)).until(() -> "failed".equals(intentOf(order).get("status")));
		assertThat(this.stock.calls(order)).isEqualTo(3);
		List<EffectIntent> failed = this.endpoint.intents("failed", null, null);
		EffectIntent shown = failed.stream()
			.filter((intent) -> intent.payloadJson().contains(order))
			.findFirst()
			.orElseThrow();
		assertThat(shown.effectName()).isEqualTo(ModulithPublications.EFFECT_NAME);
		assertThat(shown.lastError()).contains("Gave up after 3 attempt(s)").contains("no such product");
		assertThat(this.registry.findIncompletePublications()).filteredOn((p) -> order.equals(orderOf(p)))
			.singleElement()
			.satisfies((p) -> assertThat(p.getStatus()).isEqualTo(EventPublication.Status.FAILED));
		this.stock.cure(order);
		this.endpoint.act(shown.id(), "retry", null);
		await().atMost(Duration.ofSeconds(20)).until(() -> "completed".equals(intentOf(order).get("status")));
		assertThat(reservations(order)).isEqualTo(1);
	}

	@Test
	void resubmittingIncompletePublicationsRunsFailedOnesAgainThroughTheDrainer() {
		String order = "poison-resubmit-" + UUID.randomUUID();
		this.orders.place(order);
		await().atMost(Duration.ofSeconds(20)).until(() -> "failed".equals(intentOf(order).get("status")));
		this.stock.cure(order);
		this.incomplete.resubmitIncompletePublications((publication) -> order.equals(orderOf(publication)));
		await().atMost(Duration.ofSeconds(20)).until(() -> "completed".equals(intentOf(order).get("status")));
		assertThat(reservations(order)).isEqualTo(1);
	}

	@Test
	void completedPublicationsCanBeDeleted() {
		String order = "deleted-" + UUID.randomUUID();
		this.orders.place(order);
		await().atMost(Duration.ofSeconds(20)).until(() -> "completed".equals(intentOf(order).get("status")));
		this.completed.deletePublications((publication) -> order.equals(orderOf(publication)));
		assertThat(intents(order)).isEmpty();
		assertThat(this.completed.findAll()).noneMatch((p) -> order.equals(orderOf(p)));
	}

	private static String orderOf(EventPublication publication) {
		return (publication.getEvent() instanceof OrderPlaced placed) ? placed.id() : null;
	}

	private int reservations(String order) {
		return this.jdbc.sql("SELECT count(*) FROM stock_reservation WHERE order_id = ?")
			.param(order)
			.query(Integer.class)
			.single();
	}

	private List<Map<String, Object>> intents(String order) {
		return this.jdbc.sql("""
				SELECT effect_name, idempotency_key, status, attempts, last_error FROM eec_effect_intent
				WHERE payload->3->>'id' = ?""").param(order).query().listOfRows();
	}

	private Map<String, Object> intentOf(String order) {
		List<Map<String, Object>> intents = intents(order);
		assertThat(intents).hasSize(1);
		return intents.get(0);
	}

}
