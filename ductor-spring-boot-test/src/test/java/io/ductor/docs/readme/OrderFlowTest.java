package io.ductor.docs.readme;

import java.io.IOException;
import java.time.Duration;

import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;

import io.ductor.docs.shop.Shop.Orders;
import io.ductor.testing.AutoConfigureDuctorTester;
import io.ductor.testing.DuctorEmbeddedDatabase;
import io.ductor.testing.DuctorTester;

// tag::readme-testing[]
@SpringBootTest
@AutoConfigureDuctorTester
@DuctorEmbeddedDatabase
class OrderFlowTest {

	@Autowired
	Orders orders;

	@Autowired
	DuctorTester ductor;

	@Test
	void aChargeWhoseAnswerWasLostIsRetriedWithTheSameKey() {
		this.orders.place("42", 1250);
		this.ductor.failNext("payment.charge", new IOException("answer lost"));
		this.ductor.drain();
		this.ductor.advance(Duration.ofMinutes(1));
		this.ductor.drain();
		this.ductor.assertEffects().hasOne("payment.charge").hasKey("charge:42").hasAttempts(2).isCompleted();
	}

}
// end::readme-testing[]
