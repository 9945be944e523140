package io.ductor.testing.bakery;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import io.ductor.test.PostgresExtension;
import io.ductor.testing.AutoConfigureDuctorTester;
import io.ductor.testing.DuctorTester;

/**
 * A test as a user of Ductor writes it: place an order, drain, assert the effect and the
 * run.
 */
@SpringBootTest(classes = Bakery.class)
@AutoConfigureDuctorTester
class BakeryOrderTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	@DynamicPropertySource
	static void database(DynamicPropertyRegistry registry) {
		BakeryDatabase.register(postgres.database(), registry);
	}

	@Autowired
	Bakery.Orders orders;

	@Autowired
	DuctorTester ductor;

	@Test
	void placingAnOrderChargesTheCustomerOnceAndCompletesTheOrder() {
		this.orders.place("42", 1250);
		this.ductor.drain();
		this.ductor.assertEffects()
			.hasOne("payment.charge")
			.hasKey("charge:42")
			.hasArguments("42", 1250)
			.isCompleted()
			.hasAttempts(1);
		this.ductor.assertRun("42").isCompleted().hasTransitions("placed", "charged");
	}

}
