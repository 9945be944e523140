package io.ductor.sample;

import java.io.IOException;
import java.time.Duration;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import io.ductor.effect.EffectStatus;
import io.ductor.sample.order.OrderFlow;
import io.ductor.sample.order.PlaceOrderRequest;
import io.ductor.test.PostgresExtension;
import io.ductor.testing.AutoConfigureDuctorTester;
import io.ductor.testing.DuctorTester;

/**
 * The shop's order flow with {@link DuctorTester}: no HTTP and no waiting, every effect
 * drained on the test's thread. {@link OrderEndToEndTest} proves the same flows through
 * HTTP with the real drainer.
 */
@SpringBootTest(classes = SampleApplication.class,
		properties = { "sample.gateway.failure-rate=0", "sample.gateway.latency=0s", "sample.mailer.failure-rate=0",
				"sample.mailer.latency=0s" })
@AutoConfigureDuctorTester
class OrderFlowTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	@DynamicPropertySource
	static void database(DynamicPropertyRegistry registry) {
		registry.add("spring.datasource.url", postgres::jdbcUrl);
		registry.add("spring.datasource.username", postgres::username);
		registry.add("spring.datasource.password", () -> (postgres.password() != null) ? postgres.password() : "");
		registry.add("spring.kafka.bootstrap-servers", SampleKafka::bootstrapServers);
	}

	@Autowired
	OrderFlow orders;

	@Autowired
	DuctorTester ductor;

	@Test
	void placedOrderReservesChargesSendsTheReceiptAndCompletes() {
		String id = this.orders.place("k-1", new PlaceOrderRequest("alice", "book-1", 2));
		this.ductor.drain();
		this.ductor.assertRun(id).isCompleted().hasTransitions("place", "stock:reserve:" + id, "payment:charge:" + id);
		this.ductor.assertEffects()
			.containsExactly("stock.reserve", "ductor.kafka.send", "payment.charge", "receipt.send");
		this.ductor.assertEffects()
			.hasOne("payment.charge")
			.hasKey("charge:" + id)
			.hasArguments(id, 9000)
			.isCompleted();
	}

	@Test
	void aGatewayThatFailsTwiceIsRetriedWithTheSameKeyAndTheOrderCompletes() {
		String id = this.orders.place("k-2", new PlaceOrderRequest("bob", "book-1", 1));
		this.ductor.failNext("payment.charge", 2, new IOException("gateway unreachable"));
		for (int i = 0; i < 3; i++) {
			this.ductor.drain();
			this.ductor.advance(Duration.ofMinutes(1));
		}
		this.ductor.assertEffects().hasOne("payment.charge").hasKey("charge:" + id).isCompleted().hasAttempts(3);
		this.ductor.assertRun(id).isCompleted();
	}

	@Test
	void aReceiptWhoseOutcomeIsUnknownIsReconciledFromTheSentLogAndSentOnce() {
		String id = this.orders.place("k-3", new PlaceOrderRequest("carol", "book-1", 1));
		this.ductor.outcomeUnknownNext("receipt.send");
		this.ductor.drain();
		this.ductor.assertEffects().hasOne("receipt.send").hasStatus(EffectStatus.RECONCILING);
		this.ductor.advance(Duration.ofSeconds(1));
		this.ductor.drain();
		this.ductor.assertEffects().hasOne("receipt.send").isCompleted().hasAttempts(2);
	}

}
