package io.ductor.docs;

import java.net.URI;

import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

import io.ductor.idempotency.Fingerprints;
import io.ductor.idempotency.IdempotencyService;
import io.ductor.idempotency.IdempotentRequest;
import io.ductor.idempotency.IdempotentResult;
import io.ductor.idempotency.web.Idempotent;

/**
 * The Java blocks of {@code docs/idempotency.md}, compiled against Ductor's API. The
 * page's controller is an inner class here, so that the collaborators the page leaves out
 * are fields of this one.
 */
class IdempotencyPageSnippets {

	Orders orders;

	IdempotencyService idempotency;

	Receipts receipts;

	Gateway gateway;

	// tag::idempotency-endpoint[]
	@RestController
	class OrderController {

		@PostMapping("/orders")
		@Idempotent
		ResponseEntity<Order> place(@RequestBody OrderRequest request) {
			Order order = orders.place(request);
			return ResponseEntity.created(URI.create("/orders/" + order.id())).body(order);
		}

	}
	// end::idempotency-endpoint[]

	void onMessage(String tenant, Message message) {
		// tag::idempotency-from-code[]
		IdempotentRequest request = new IdempotentRequest(tenant, "payments", message.key(),
				Fingerprints.sha256(message.body()));
		IdempotentResult<Receipt> result = this.idempotency.executeInTransaction(request, Receipt.class,
				() -> this.receipts.save(message));
		IdempotentResult<Receipt> sent = this.idempotency.execute(request, Receipt.class,
				() -> this.gateway.charge(message));
		// end::idempotency-from-code[]
	}

	interface Orders {

		Order place(OrderRequest request);

	}

	interface Receipts {

		Receipt save(Message message);

	}

	interface Gateway {

		Receipt charge(Message message);

	}

	record Order(String id) {
	}

	record OrderRequest(String sku) {
	}

	record Message(String key, String body) {
	}

	record Receipt(String id) {
	}

}
