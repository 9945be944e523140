package io.ductor.reliability.meet;

import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * {@code POST /orders?key=&hold=&rollback=}: places an order ({@code 201} new,
 * {@code 200} existing, {@code 422} rolled back on purpose); {@code GET /ready} for the
 * launcher.
 */
@RestController
class OrderController {

	private final Orders orders;

	OrderController(Orders orders) {
		this.orders = orders;
	}

	@PostMapping("/orders")
	ResponseEntity<String> place(@RequestParam String key, @RequestParam(defaultValue = "0") long hold,
			@RequestParam(defaultValue = "false") boolean rollback) {
		boolean created = this.orders.place(key, hold, rollback);
		return ResponseEntity.status(created ? HttpStatus.CREATED : HttpStatus.OK).body(key);
	}

	@ExceptionHandler(Orders.RolledBack.class)
	ResponseEntity<String> rolledBack(Orders.RolledBack ex) {
		return ResponseEntity.status(HttpStatus.UNPROCESSABLE_CONTENT).body(ex.getMessage());
	}

	@GetMapping("/ready")
	String ready() {
		return "ready";
	}

}
