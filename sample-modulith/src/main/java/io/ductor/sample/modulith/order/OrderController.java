package io.ductor.sample.modulith.order;

import java.util.Map;

import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/** {@code POST /orders?sku=…&quantity=…} completes an order. */
@RestController
class OrderController {

	private final Orders orders;

	OrderController(Orders orders) {
		this.orders = orders;
	}

	@PostMapping("/orders")
	Map<String, String> complete(@RequestParam String sku, @RequestParam int quantity) {
		return Map.of("orderId", this.orders.complete(sku, quantity));
	}

}
