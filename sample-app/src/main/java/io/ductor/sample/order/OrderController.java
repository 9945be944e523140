package io.ductor.sample.order;

import java.net.URI;
import java.util.List;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.ResponseStatusException;

import io.ductor.idempotency.web.Idempotent;

/**
 * The shop's HTTP interface. {@code POST /orders} is {@link Idempotent}: the same request
 * sent again with the same {@code Idempotency-Key} gets the first answer back (with
 * {@code Idempotency-Replayed: true}) and places nothing.
 */
@RestController
@RequestMapping("/orders")
class OrderController {

	private static final Logger logger = LoggerFactory.getLogger(OrderController.class);

	private final OrderFlow flow;

	private final OrderViews views;

	OrderController(OrderFlow flow, OrderViews views) {
		this.flow = flow;
		this.views = views;
	}

	@PostMapping
	@Idempotent
	ResponseEntity<OrderView> place(@RequestHeader("Idempotency-Key") String key,
			@RequestBody PlaceOrderRequest request) {
		String id = this.flow.place(unquote(key), request);
		logger.info("Order {} placed", id);
		return ResponseEntity.created(URI.create("/orders/" + id)).body(this.views.find(id).orElseThrow());
	}

	@GetMapping
	List<OrderView> latest(@RequestParam(defaultValue = "10") int limit) {
		return this.views.latest(Math.max(1, Math.min(limit, 100)));
	}

	@GetMapping("/{id}")
	OrderView get(@PathVariable String id) {
		return this.views.find(id)
			.orElseThrow(() -> new ResponseStatusException(HttpStatus.NOT_FOUND, "No order with id " + id));
	}

	private static String unquote(String key) {
		String value = key.strip();
		return (value.length() >= 2 && value.startsWith("\"") && value.endsWith("\""))
				? value.substring(1, value.length() - 1) : value;
	}

}
