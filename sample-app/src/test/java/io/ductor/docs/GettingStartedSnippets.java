package io.ductor.docs;

import java.net.URI;
import java.util.Optional;
import java.util.UUID;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.http.ResponseEntity;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestHeader;

import io.ductor.effect.DurableEffect;
import io.ductor.effect.EffectContext;
import io.ductor.effect.EffectOperations;
import io.ductor.effect.EffectReconciler;
import io.ductor.effect.EffectResolution;
import io.ductor.effect.Receiver;
import io.ductor.effect.ReconcileOutcome;
import io.ductor.idempotency.web.Idempotent;
import io.ductor.run.TickService;

/**
 * The Java blocks of "A five-minute tour" in {@code docs/getting-started.md}: the sample
 * shop's order flow cut down to the lines that matter, compiled against Ductor's API;
 * {@link DocumentedDeclarationsTest} starts Ductor on its effects.
 */
final class GettingStartedSnippets {

	private GettingStartedSnippets() {
	}

	static class OrderController {

		private OrderFlow flow;

		private OrderViews views;

		// tag::getting-started-request[]
		@PostMapping("/orders")
		@Idempotent
		ResponseEntity<OrderView> place(@RequestHeader("Idempotency-Key") String key,
				@RequestBody PlaceOrderRequest request) {
			String id = this.flow.place(key, request);
			return ResponseEntity.created(URI.create("/orders/" + id)).body(this.views.find(id).orElseThrow());
		}
		// end::getting-started-request[]

	}

	static class OrderFlow {

		private Orders orders;

		private TickService ticks;

		private OrderEffects effects;

		// tag::getting-started-run[]
		@Transactional
		public String place(String key, PlaceOrderRequest request) {
			String id = UUID.randomUUID().toString();
			this.orders.insert(id, key, request);
			this.ticks.start("order", id, OrderState.placed(request));
			this.ticks.tick(id, "place", request, OrderState.class, (state, tick) -> {
				this.effects.reserveStock(id, state.sku(), state.quantity());
				return state;
			});
			return id;
		}
		// end::getting-started-run[]

		// tag::getting-started-answer[]
		void paymentAnswered(String orderId, String attemptKey, Charge charge) {
			this.ticks.tick(orderId, "payment:" + attemptKey, charge, OrderState.class, (state, tick) -> {
				this.effects.sendReceipt(orderId, state.customer(), receiptText(state, charge));
				tick.complete();
				return state.paid(charge.id());
			});
		}
		// end::getting-started-answer[]

		private String receiptText(OrderState state, Charge charge) {
			return "Thank you, " + state.customer() + " (" + charge.id() + ")";
		}

	}

	static class OrderEffects {

		private ObjectProvider<OrderFlow> flow;

		private Gateway gateway;

		private Mail mail;

		@DurableEffect(name = "stock.reserve", key = "'reserve:' + #orderId")
		public void reserveStock(String orderId, String sku, int quantity) {
		}

		// tag::getting-started-effect[]
		@DurableEffect(name = "payment.charge", key = "'charge:' + #orderId", maxAttempts = 20)
		public void charge(String orderId, long amountCents) {
			String key = EffectContext.current().idempotencyKey();
			Charge charge = this.gateway.charge(key, orderId, amountCents);
			this.flow.getObject().paymentAnswered(orderId, key, charge);
		}
		// end::getting-started-effect[]

		// tag::getting-started-reconcile[]
		@DurableEffect(name = "receipt.send", key = "'receipt:' + #orderId", receiver = Receiver.NOT_IDEMPOTENT)
		public void sendReceipt(String orderId, String recipient, String text) {
			this.mail.send(EffectContext.current().idempotencyKey(), orderId, recipient, text);
		}

		@EffectReconciler("receipt.send")
		public ReconcileOutcome receiptSent(String key, String orderId, String recipient, String text) {
			return this.mail.wasSent(key, orderId) ? ReconcileOutcome.APPLIED : ReconcileOutcome.NOT_APPLIED;
		}
		// end::getting-started-reconcile[]

	}

	static class Operator {

		private EffectOperations operations;

		void markDone(long intentId) {
			// tag::getting-started-decide[]
			this.operations.resolve(intentId, EffectResolution.MARK_DONE);
			// end::getting-started-decide[]
		}

	}

	interface Orders {

		void insert(String id, String key, PlaceOrderRequest request);

	}

	interface OrderViews {

		Optional<OrderView> find(String id);

	}

	interface Gateway {

		Charge charge(String key, String orderId, long amountCents);

	}

	interface Mail {

		void send(String key, String orderId, String recipient, String text);

		boolean wasSent(String key, String orderId);

	}

	record PlaceOrderRequest(String customer, String sku, int quantity) {
	}

	record OrderView(String id) {
	}

	record Charge(String id) {
	}

	record OrderState(String customer, String sku, int quantity, String chargeId) {

		static OrderState placed(PlaceOrderRequest request) {
			return new OrderState(request.customer(), request.sku(), request.quantity(), null);
		}

		OrderState paid(String chargeId) {
			return new OrderState(this.customer, this.sku, this.quantity, chargeId);
		}

	}

}
