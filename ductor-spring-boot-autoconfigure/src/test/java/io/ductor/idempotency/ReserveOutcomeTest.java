package io.ductor.idempotency;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import io.ductor.DuctorException;
import io.ductor.IdempotencyKeyReuseException;
import io.ductor.idempotency.internal.KeyReserver;

import static org.assertj.core.api.Assertions.assertThat;

/** What each kind of outcome carries and the errors they become, without a database. */
class ReserveOutcomeTest {

	private final IdempotentRequest request = new IdempotentRequest("acme", "orders", "k-1", "fp");

	@Test
	void aReservationAnswersForItsRequest() {
		Reservation reservation = new Reservation(this.request, java.util.UUID.randomUUID());
		ReserveOutcome outcome = new ReserveOutcome.Reserved(reservation);
		assertThat(outcome.request()).isSameAs(this.request);
		assertThat(KeyReserver.tag(outcome)).isEqualTo("reserved");
	}

	@Test
	void eachOutcomeHasTheObservationTagOfItsResult() {
		assertThat(KeyReserver.tag(new ReserveOutcome.Replay(this.request, null))).isEqualTo("replay");
		assertThat(KeyReserver.tag(new ReserveOutcome.InFlight(this.request))).isEqualTo("in_flight");
		assertThat(KeyReserver.tag(new ReserveOutcome.FingerprintMismatch(this.request)))
			.isEqualTo("fingerprint_mismatch");
		assertThat(KeyReserver.tag(new ReserveOutcome.OptedOut(this.request))).isEqualTo("opted_out");
	}

	@Test
	void anInFlightDuplicateSaysWhetherItWaitedOrWasRejected() {
		ReserveOutcome.InFlight inFlight = new ReserveOutcome.InFlight(this.request);
		assertThat(inFlight.exception(null)).isInstanceOf(DuctorException.class)
			.hasMessage("Idempotency key 'k-1' (pool 'orders', tenant 'acme') is being processed by an earlier"
					+ " request and duplicates are rejected (duplicate policy REJECT); retry later with the same key");
		assertThat(inFlight.exception(Duration.ofSeconds(5))).hasMessage("Idempotency key 'k-1' (pool 'orders',"
				+ " tenant 'acme') was still being processed by an earlier request after waiting PT5S"
				+ " (ductor.idempotency.wait-timeout); retry later with the same key");
	}

	@Test
	void aFingerprintMismatchIsAKeyReuse() {
		IdempotencyKeyReuseException reuse = new ReserveOutcome.FingerprintMismatch(
				new IdempotentRequest("", "orders", "k-1", "fp"))
			.exception();
		assertThat(reuse).isInstanceOf(DuctorException.class)
			.hasMessage("Idempotency key 'k-1' (pool 'orders') was already used for a different request; a new"
					+ " request needs a new key");
	}

	@Test
	void aMalformedKeyIsADuctorException() {
		assertThat(new InvalidIdempotencyKeyException("bad")).isInstanceOf(DuctorException.class);
	}

}
