package io.ductor.reliability.booking;

import java.net.URI;

import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RestController;

import io.ductor.idempotency.Fingerprints;
import io.ductor.idempotency.IdempotencyKeyInFlightException;
import io.ductor.idempotency.IdempotencyService;
import io.ductor.idempotency.IdempotentRequest;
import io.ductor.idempotency.IdempotentResult;
import io.ductor.idempotency.web.IdempotencyMode;
import io.ductor.idempotency.web.Idempotent;

/**
 * {@code POST /bookings}: one booking per {@code Idempotency-Key}, answered {@code 201}
 * with the booking read back. {@code POST /one-transaction/bookings} does the same with
 * {@link IdempotencyService#executeInTransaction}, the README's one-transaction form from
 * code; {@code POST /two-phase/bookings} with {@code @Idempotent(mode = TWO_PHASE)}.
 * {@code GET /bookings/{id}}; {@code GET /ready} for the launcher.
 */
@RestController
class BookingController {

	private final Bookings bookings;

	private final IdempotencyService idempotency;

	BookingController(Bookings bookings, IdempotencyService idempotency) {
		this.bookings = bookings;
		this.idempotency = idempotency;
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

	/**
	 * The same booking with {@code @Idempotent(mode = TWO_PHASE)}: the reservation, the
	 * booking and the completion commit separately. Its crash window is documented; the
	 * storm uses it to show that it still finds that window.
	 */
	@Idempotent(mode = IdempotencyMode.TWO_PHASE)
	@PostMapping("/two-phase/bookings")
	ResponseEntity<Booking> bookInTwoPhases(@RequestHeader("Idempotency-Key") String key,
			@RequestBody BookingRequest request) {
		return book(key, request);
	}

	@PostMapping("/one-transaction/bookings")
	ResponseEntity<Booking> bookInOneTransaction(@RequestHeader("Idempotency-Key") String key,
			@RequestBody BookingRequest request) {
		IdempotentRequest idempotent = new IdempotentRequest("", "bookings", key,
				Fingerprints.sha256(request.guest(), request.room(), Integer.toString(request.nights())));
		IdempotentResult<Booking> result = this.idempotency.executeInTransaction(idempotent, Booking.class, () -> {
			String id = this.bookings.book(key, request.guest(), request.room(), request.nights());
			return this.bookings.find(id).orElseThrow();
		});
		ResponseEntity.BodyBuilder answer = ResponseEntity.created(URI.create("/bookings/" + result.value().id()));
		if (result.replayed()) {
			answer.header("Idempotency-Replayed", "true");
		}
		return answer.body(result.value());
	}

	@ExceptionHandler(IdempotencyKeyInFlightException.class)
	ResponseEntity<ProblemDetail> inFlight(IdempotencyKeyInFlightException ex) {
		return ResponseEntity.status(HttpStatus.CONFLICT)
			.header("Retry-After", "1")
			.body(ProblemDetail.forStatusAndDetail(HttpStatus.CONFLICT, ex.getMessage()));
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
