package io.ductor.run.answer;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.stereotype.Component;

import io.ductor.effect.DurableEffect;
import io.ductor.effect.EffectContext;

/**
 * The effects of "Effects that answer the run" in {@code docs/runs.md}, as the page shows
 * them: the flow through an {@link ObjectProvider}, so that the two beans form no cycle.
 */
// tag::runs-effects-answer-the-run-effects[]
@Component
public class OrderEffects {

	private final ObjectProvider<OrderFlow> flow; // not OrderFlow: that is a cycle

	private final PaymentGateway gateway;

	OrderEffects(ObjectProvider<OrderFlow> flow, PaymentGateway gateway) {
		this.flow = flow;
		this.gateway = gateway;
	}

	@DurableEffect(name = "payment.charge", key = "'charge:' + #orderId")
	public void charge(String orderId, long amountCents) {
		String key = EffectContext.current().idempotencyKey();
		Charge charge = this.gateway.charge(key, orderId, amountCents);
		this.flow.getObject().paymentAnswered(orderId, key, charge); // looked up when the
																		// effect runs
	}

}
// end::runs-effects-answer-the-run-effects[]
