package io.ductor.docs.testing;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;

import io.ductor.docs.shop.Shop.Orders;
import io.ductor.effect.EffectIntent;
import io.ductor.effect.EffectStatus;
import io.ductor.testing.AutoConfigureDuctorTester;
import io.ductor.testing.DuctorEmbeddedDatabase;
import io.ductor.testing.DuctorTester;

import static org.assertj.core.api.Assertions.assertThat;

// tag::testing-order-flow-test[]
@SpringBootTest
@AutoConfigureDuctorTester
@DuctorEmbeddedDatabase
class OrderFlowTest {

	@Autowired
	Orders orders;

	@Autowired
	DuctorTester ductor;

	@Test
	void placingAnOrderChargesOnceAndCompletesTheOrder() {
		this.orders.place("42", 1250);
		this.ductor.drain();
		this.ductor.assertEffects().hasOne("payment.charge").hasKey("charge:42").hasArguments("42", 1250).isCompleted();
		this.ductor.assertRun("42").isCompleted().hasTransitions("placed", "charged");
	}

	@Test
	void theReminderFiresAfterAnHour() {
		this.orders.remindIn("43", Duration.ofHours(1));
		this.ductor.advance(Duration.ofMinutes(59));
		assertThat(this.ductor.drain()).extracting(EffectIntent::effectName).doesNotContain("reminder.send");
		this.ductor.advance(Duration.ofMinutes(1));
		assertThat(this.ductor.drain()).extracting(EffectIntent::effectName).contains("reminder.send");
	}

	@Test
	void aReceiptWhoseConfirmationWasLostWaitsForADecision() {
		this.orders.place("44", 100);
		this.ductor.outcomeUnknownNext("receipt.send");
		this.ductor.drain();
		this.ductor.assertEffects().hasOne("receipt.send").hasStatus(EffectStatus.NEEDS_DECISION);
	}

}
// end::testing-order-flow-test[]
