package io.ductor.docs;

import java.net.URI;

import org.springframework.http.ResponseEntity;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;

import io.ductor.effect.DurableEffect;
import io.ductor.effect.EffectContext;
import io.ductor.effect.EffectReconciler;
import io.ductor.effect.Receiver;
import io.ductor.effect.ReconcileOutcome;
import io.ductor.idempotency.web.Idempotent;
import io.ductor.run.TickOutcome;
import io.ductor.run.TickService;

/**
 * The Java blocks of {@code README.md} that an application holds, compiled against
 * Ductor's API; {@link DocumentedDeclarationsTest} starts Ductor on their effects.
 */
final class ReadmeSnippets {

	private ReadmeSnippets() {
	}

	/** "Durable effects". */
	static class Payments {

		private Gateway gateway;

		private Orders orders;

		private Payments effects;

		// tag::readme-durable-effect[]
		@DurableEffect(name = "payment.charge", key = "'charge:' + #orderId", maxAttempts = 20)
		public void charge(String orderId, long amountCents) {
			this.gateway.charge(EffectContext.current().idempotencyKey(), orderId, amountCents);
		}

		@Transactional
		public void pay(Order order) {
			this.orders.markPaying(order);
			this.effects.charge(order.id(), order.total());
		}
		// end::readme-durable-effect[]

	}

	/** "Ingress idempotency". */
	static class OrderController {

		private Orders orders;

		// tag::readme-idempotent[]
		@PostMapping("/orders")
		@Idempotent
		ResponseEntity<Order> place(@RequestBody OrderRequest request) {
			Order order = this.orders.place(request);
			return ResponseEntity.created(URI.create("/orders/" + order.id())).body(order);
		}
		// end::readme-idempotent[]

	}

	/** "Runs and ticks". */
	static class OrderFlow {

		private TickService ticks;

		private ReceiptEffects effects;

		void paymentAnswered(String orderId, OrderRequest request, String attemptKey, Charge charge) {
			// tag::readme-runs[]
			this.ticks.start("order", orderId, OrderState.placed(request));
			TickOutcome<OrderState> outcome = this.ticks.tick(orderId, "payment:" + attemptKey, charge,
					OrderState.class, (state, tick) -> {
						this.effects.sendReceipt(orderId, state.customer());
						tick.complete();
						return state.paid(charge.id());
					});
			// end::readme-runs[]
		}

	}

	/** "Reconcile and compensate". */
	static class ReceiptEffects {

		private Mail mail;

		// tag::readme-reconcile-and-compensate[]
		@DurableEffect(name = "receipt.send", key = "'receipt:' + #orderId", receiver = Receiver.NOT_IDEMPOTENT)
		public void sendReceipt(String orderId, String recipient) {
			this.mail.send(EffectContext.current().idempotencyKey(), recipient);
		}

		@EffectReconciler("receipt.send")
		public ReconcileOutcome receiptSent(String key, String orderId, String recipient) {
			return this.mail.wasSent(key) ? ReconcileOutcome.APPLIED : ReconcileOutcome.NOT_APPLIED;
		}

		@DurableEffect(name = "payment.charge", key = "'charge:' + #orderId", compensation = "payment.refund")
		public void charge(String orderId, long amountCents) {
		}
		// end::readme-reconcile-and-compensate[]

		@DurableEffect(name = "payment.refund")
		public void refund(String orderId, long amountCents) {
		}

	}

	interface Gateway {

		void charge(String key, String orderId, long amountCents);

	}

	interface Orders {

		void markPaying(Order order);

		Order place(OrderRequest request);

	}

	interface Mail {

		void send(String key, String recipient);

		boolean wasSent(String key);

	}

	record Order(String id, long total) {
	}

	record OrderRequest(String customer, String sku) {
	}

	record Charge(String id) {
	}

	record OrderState(String customer, String chargeId) {

		static OrderState placed(OrderRequest request) {
			return new OrderState(request.customer(), null);
		}

		OrderState paid(String chargeId) {
			return new OrderState(this.customer, chargeId);
		}

	}

}
