package io.ductor.modulithapp;

import java.time.Duration;
import java.util.List;
import java.util.UUID;

import javax.sql.DataSource;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.modulith.events.FailedEventPublications;
import org.springframework.modulith.events.IncompleteEventPublications;
import org.springframework.modulith.events.ResubmissionOptions;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import io.ductor.modulithapp.inventory.Billing;
import io.ductor.modulithapp.inventory.Courier;
import io.ductor.modulithapp.inventory.Shipping;
import io.ductor.modulithapp.inventory.Stock;
import io.ductor.modulithapp.order.OrderPlaced;
import io.ductor.modulithapp.order.OrderShipped;
import io.ductor.modulithapp.order.Orders;
import io.ductor.test.PostgresExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A hostile reading of docs/modulith.md: resubmission beside a running attempt, several
 * listeners of one event, plain listeners, events without a transaction.
 */
@SpringBootTest(classes = ModulithApp.class)
@DirtiesContext
class HostileModulithOnDuctorTest {

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
	Shipping shipping;

	@Autowired
	Billing billing;

	@Autowired
	JdbcClient jdbc;

	@Autowired
	IncompleteEventPublications incomplete;

	@Autowired
	FailedEventPublications failed;

	@Autowired
	ApplicationEventPublisher events;

	@Test
	void resubmittingWhileTheListenerRunsDoesNotRunItASecondTime() {
		String order = "slow-" + UUID.randomUUID();
		this.orders.place(order);
		await().atMost(Duration.ofSeconds(20)).until(() -> "in_flight".equals(status(order)));
		this.incomplete.resubmitIncompletePublications((publication) -> true);
		this.incomplete.resubmitIncompletePublicationsOlderThan(Duration.ZERO);
		this.failed.resubmit(ResubmissionOptions.defaults());
		assertThat(this.stock.calls(order)).isEqualTo(1);
		this.stock.release(order);
		await().atMost(Duration.ofSeconds(20)).until(() -> "completed".equals(status(order)));
		await().during(Duration.ofSeconds(1)).atMost(Duration.ofSeconds(3)).until(() -> this.stock.calls(order) == 1);
	}

	@Test
	void twoListenersGetTheirOwnPublicationAndKeyAndAFailingOneBlocksNeitherTheOtherNorAPlainListener() {
		String order = "broken-" + UUID.randomUUID();
		this.orders.ship(order);
		// the plain listener ran once, at once, in the publishing transaction
		assertThat(this.shipping.plainCalls(order)).containsExactly(true);
		await().atMost(Duration.ofSeconds(20)).until(() -> this.shipping.noticeKeys(order).size() == 1);
		await().atMost(Duration.ofSeconds(20)).until(() -> this.shipping.labelKeys(order).size() >= 2);
		List<String> labelKeys = this.shipping.labelKeys(order);
		assertThat(labelKeys).doesNotContain("not-run-by-ductor").containsOnly(labelKeys.get(0));
		assertThat(this.shipping.noticeKeys(order)).doesNotContain(labelKeys.get(0), "not-run-by-ductor");
		assertThat(this.jdbc
			.sql("SELECT count(DISTINCT idempotency_key) FROM eec_effect_intent WHERE payload->3->>'id' = ?")
			.param(order)
			.query(Integer.class)
			.single()).isEqualTo(2);
		this.shipping.mend(order);
		this.incomplete.resubmitIncompletePublications(
				(publication) -> publication.getEvent() instanceof OrderShipped shipped && order.equals(shipped.id()));
		await().atMost(Duration.ofSeconds(20))
			.until(() -> this.jdbc
				.sql("SELECT count(*) FROM eec_effect_intent WHERE payload->3->>'id' = ? AND status = 'completed'")
				.param(order)
				.query(Integer.class)
				.single() == 2);
		assertThat(this.shipping.noticeKeys(order)).hasSize(1);
		assertThat(this.shipping.plainCalls(order)).hasSize(1);
	}

	@Test
	void anEventPublishedWithoutATransactionRecordsNothingAndRunsOnlyThePlainListener() {
		String order = "bare-" + UUID.randomUUID();
		this.events.publishEvent(new OrderShipped(order));
		this.events.publishEvent(new OrderPlaced(order));
		assertThat(this.shipping.plainCalls(order)).containsExactly(false);
		assertThat(this.jdbc.sql("SELECT count(*) FROM eec_effect_intent WHERE payload->3->>'id' = ?")
			.param(order)
			.query(Integer.class)
			.single()).isZero();
		await().during(Duration.ofMillis(500))
			.atMost(Duration.ofSeconds(2))
			.until(() -> this.shipping.noticeKeys(order).isEmpty() && this.stock.calls(order) == 0);
	}

	@Test
	void twoBeansOfOneListenerClassAreEachCalledOnceForAnEvent() {
		String order = "dispatched-" + UUID.randomUUID();
		this.orders.dispatch(order);
		await().atMost(Duration.ofSeconds(20))
			.until(() -> this.jdbc
				.sql("SELECT count(*) FROM eec_effect_intent WHERE payload->3->>'id' = ? AND status = 'completed'")
				.param(order)
				.query(Integer.class)
				.single() == 2);
		await().during(Duration.ofSeconds(1))
			.atMost(Duration.ofSeconds(3))
			.until(() -> Courier.calls(order).size() >= 2);
		assertThat(Courier.calls(order)).containsExactlyInAnyOrder("van", "bike");
	}

	/**
	 * Under Modulith's own registries the listener gets the published event itself (only
	 * a resubmission reads it back from its JSON): an event whose field is typed by an
	 * interface reaches its listener. "With no change to its code" must keep that.
	 */
	@Test
	void anEventWithAnInterfaceTypedFieldReachesItsListener() {
		String order = "paid-" + UUID.randomUUID();
		this.orders.pay(order, 1250);
		await().atMost(Duration.ofSeconds(20))
			.until(() -> status(order), (status) -> "completed".equals(status) || "failed".equals(status));
		assertThat(status(order)).isEqualTo("completed");
		assertThat(this.billing.booked(order)).isEqualTo(1250L);
	}

	private String status(String order) {
		return this.jdbc.sql("SELECT status FROM eec_effect_intent WHERE payload->3->>'id' = ?")
			.param(order)
			.query(String.class)
			.optional()
			.orElse(null);
	}

}
