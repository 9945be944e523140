package io.ductor.run.answer;

import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

import io.ductor.run.TickService;

/**
 * The flow of "Effects that answer the run" in {@code docs/runs.md}, as the page shows
 * it.
 */
// tag::runs-effects-answer-the-run-flow[]
@Service
public class OrderFlow {

	private final TickService ticks;

	private final OrderEffects effects;

	OrderFlow(TickService ticks, OrderEffects effects) {
		this.ticks = ticks;
		this.effects = effects;
	}

	@Transactional
	public void place(String orderId, long amountCents) {
		this.ticks.start("order", orderId, new OrderState("placed", null));
		this.ticks.tick(orderId, "place", OrderState.class, (state, tick) -> {
			this.effects.charge(orderId, amountCents); // recorded; runs after the commit
			return state;
		});
	}

	public void paymentAnswered(String orderId, String attemptKey, Charge charge) {
		this.ticks.tick(orderId, "payment:" + attemptKey, charge, OrderState.class, (state, tick) -> {
			tick.complete();
			return new OrderState("paid", charge.id());
		});
	}

}
// end::runs-effects-answer-the-run-flow[]
