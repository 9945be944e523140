package io.ductor.reliability.booking;

import java.net.URI;

import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RestController;

import io.ductor.idempotency.web.Idempotent;

/**
 * {@code POST /bookings}: one booking per {@code Idempotency-Key}, answered {@code 201} with the
 * booking read back; {@code GET /bookings/{id}}; {@code GET /ready} for the launcher.
 */
@RestController
class BookingController {

	private final Bookings bookings;

	BookingController(Bookings bookings) {
		this.bookings = bookings;
	}

	/** What a guest asks for. */
	record BookingRequest(String guest, String room, int nights) {
	}

	@Idempotent
	@PostMapping("/bookings")
	ResponseEntity<Booking> book(@RequestHeader("Idempotency-Key") String key, @RequestBody BookingRequest request) {
		String id = this.bookings.book(key, request.guest(), request.room(), request.nights());
		return ResponseEntity.created(URI.create("/bookings/" + id)).body(this.bookings.find(id).orElseThrow());
	}

	@GetMapping("/bookings/{id}")
	ResponseEntity<Booking> find(@PathVariable String id) {
		return ResponseEntity.of(this.bookings.find(id));
	}

	@GetMapping("/ready")
	String ready() {
		return "ready";
	}

}
