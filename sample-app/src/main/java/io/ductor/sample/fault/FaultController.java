package io.ductor.sample.fault;

import java.util.Map;

import org.springframework.http.HttpStatus;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.ResponseStatusException;

import io.ductor.sample.mail.MailServer;
import io.ductor.sample.payment.PaymentGateway;
import io.ductor.sample.stock.StockRoom;

/**
 * Queues a fault for the next request to a simulated receiver, so that a retry or a
 * decision can be watched on demand: {@code POST /faults} with {@code {"target":
 * "gateway", "fault": "AFTER_APPLY"}}; target {@code warehouse} makes the next paid order
 * fail at shipping, so that its charge is refunded and its stock released by
 * compensations.
 */
@RestController
@RequestMapping("/faults")
class FaultController {

	private final Map<String, FaultPlan> plans;

	FaultController(PaymentGateway gateway, MailServer mail, StockRoom stock) {
		this.plans = Map.of("gateway", gateway.faults(), "mailer", mail.faults(), "warehouse", stock.shippingFaults());
	}

	@GetMapping
	Map<String, Integer> queued() {
		return Map.of("gateway", this.plans.get("gateway").queued(), "mailer", this.plans.get("mailer").queued(),
				"warehouse", this.plans.get("warehouse").queued());
	}

	@PostMapping
	Map<String, Integer> inject(@RequestBody Injection injection) {
		FaultPlan plan = this.plans.get(injection.target());
		if (plan == null || injection.fault() == null) {
			throw new ResponseStatusException(HttpStatus.BAD_REQUEST,
					"target must be 'gateway', 'mailer' or 'warehouse', fault NONE, BEFORE_APPLY, AFTER_APPLY or AFTER_APPLY_LOG_DOWN");
		}
		plan.inject(injection.fault());
		return queued();
	}

	/**
	 * @param target {@code gateway}, {@code mailer} or {@code warehouse} (any fault: the
	 * shelf is empty when the next paid order ships)
	 * @param fault what the next request gets
	 */
	record Injection(String target, Fault fault) {
	}

}
