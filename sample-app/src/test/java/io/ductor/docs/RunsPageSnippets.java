package io.ductor.docs;

import org.springframework.stereotype.Service;

import io.ductor.run.TickOutcome;
import io.ductor.run.TickService;

/**
 * The first Java block of {@code docs/runs.md}, compiled against Ductor's API (the page's
 * other blocks are the code of {@code EffectsAnsweringTheRunTest} and
 * {@code ReadingARunTest}, which run it).
 */
class RunsPageSnippets {

	// tag::runs-order-flow[]
	@Service
	class OrderFlow {

		private final TickService ticks;

		OrderFlow(TickService ticks) {
			this.ticks = ticks;
		}

		void place(String orderId, Order order) {
			this.ticks.start("order", orderId, new OrderState(order, "placed"));
		}

		void paymentAnswered(String orderId, String attemptKey, PaymentAnswer answer) {
			TickOutcome<OrderState> outcome = this.ticks.tick(orderId, "payment:" + attemptKey, answer,
					OrderState.class, (state, tick) -> {
						if (answer.declined()) {
							tick.fail("payment declined");
						}
						return state.paid(answer);
					});
		}

	}
	// end::runs-order-flow[]

	record Order(String sku, int quantity) {
	}

	record PaymentAnswer(String chargeId, boolean declined) {
	}

	record OrderState(Order order, String stage) {

		OrderState paid(PaymentAnswer answer) {
			return new OrderState(this.order, answer.declined() ? "declined" : "paid");
		}

	}

}
