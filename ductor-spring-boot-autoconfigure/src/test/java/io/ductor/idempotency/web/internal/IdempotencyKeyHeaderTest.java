package io.ductor.idempotency.web.internal;

import java.util.List;

import org.junit.jupiter.api.Test;

import org.springframework.mock.web.MockHttpServletRequest;

import io.ductor.DuctorException;
import io.ductor.idempotency.InvalidIdempotencyKeyException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/** Reading the key from its header, without a server. */
class IdempotencyKeyHeaderTest {

	private final IdempotencyKeyHeader header = new IdempotencyKeyHeader("Idempotency-Key");

	@Test
	void aBareValueAndAnSfStringGiveTheSameKey() {
		assertThat(this.header.key(List.of("order-42"), true)).isEqualTo("order-42");
		assertThat(this.header.key(List.of("\"order-42\""), true)).isEqualTo("order-42");
		assertThat(this.header.key(List.of("  order-42 "), true)).isEqualTo("order-42");
	}

	@Test
	void aMissingHeaderOptsOutUnlessTheKeyIsRequired() {
		assertThat(this.header.key(List.of(), false)).isEmpty();
		assertThatExceptionOfType(InvalidIdempotencyKeyException.class)
			.isThrownBy(() -> this.header.key(List.of(), true))
			.withMessage("This request requires an idempotency key in the Idempotency-Key header");
	}

	@Test
	void anEmptyValueOptsOutUnlessTheKeyIsRequired() {
		assertThat(this.header.key(List.of(""), false)).isEmpty();
		assertThat(this.header.key(List.of("\"\""), false)).isEmpty();
		assertThatExceptionOfType(InvalidIdempotencyKeyException.class)
			.isThrownBy(() -> this.header.key(List.of("\"\""), true))
			.withMessage("The Idempotency-Key header must not be empty");
	}

	@Test
	void aHeaderSentTwiceIsRefused() {
		assertThatExceptionOfType(InvalidIdempotencyKeyException.class)
			.isThrownBy(() -> this.header.key(List.of("a", "b"), false))
			.withMessage("The Idempotency-Key header must be sent once, not 2 times");
	}

	@Test
	void escapedCharactersInAnSfStringAreRefused() {
		assertThatExceptionOfType(InvalidIdempotencyKeyException.class)
			.isThrownBy(() -> this.header.key(List.of("\"a\\\"b\""), false))
			.withMessage("The Idempotency-Key header must not contain escaped characters");
	}

	@Test
	void aMalformedKeyIsRefusedNamingTheHeaderAndTheProblem() {
		assertThatExceptionOfType(InvalidIdempotencyKeyException.class)
			.isThrownBy(() -> this.header.key(List.of("a b"), false))
			.withMessageStartingWith("The Idempotency-Key header is malformed: ")
			.withMessageContaining("U+0020 at index 1")
			.isInstanceOf(DuctorException.class);
		assertThatExceptionOfType(InvalidIdempotencyKeyException.class)
			.isThrownBy(() -> this.header.key(List.of("k".repeat(256)), false))
			.withMessageContaining("at most 255 characters");
	}

	@Test
	void theRequestsHeaderIsReadByItsConfiguredName() {
		IdempotencyKeyHeader custom = new IdempotencyKeyHeader("X-Request-Key");
		MockHttpServletRequest request = new MockHttpServletRequest("POST", "/orders");
		request.addHeader("Idempotency-Key", "ignored");
		request.addHeader("X-Request-Key", "\"k-1\"");
		assertThat(custom.key(request, true)).isEqualTo("k-1");
		request.addHeader("X-Request-Key", "k-2");
		assertThatExceptionOfType(InvalidIdempotencyKeyException.class).isThrownBy(() -> custom.key(request, true))
			.withMessage("The X-Request-Key header must be sent once, not 2 times");
	}

}
