package io.ductor.idempotency.web.internal;

import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicLong;

import jakarta.servlet.ReadListener;
import jakarta.servlet.ServletInputStream;
import org.junit.jupiter.api.Test;

import org.springframework.http.HttpStatus;
import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.util.StreamUtils;
import org.springframework.util.unit.DataSize;

import io.ductor.idempotency.Fingerprints;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The bounds of reading a request for its fingerprint, which HTTP tests cannot observe.
 */
class RequestFingerprinterTest {

	private final RequestFingerprinter fingerprinter = new RequestFingerprinter(DataSize.ofKilobytes(4));

	@Test
	void aBodyWithoutContentLengthIsReadNoFurtherThanOneByteBeyondTheLimit() {
		AtomicLong read = new AtomicLong();
		MockHttpServletRequest request = new MockHttpServletRequest("POST", "/orders") {

			@Override
			public ServletInputStream getInputStream() {
				return new EndlessStream(read);
			}

		};
		request.setContentType("application/json");
		assertThatExceptionOfType(RejectedRequestException.class).isThrownBy(() -> this.fingerprinter.read(request))
			.satisfies((ex) -> assertThat(ex.status()).isEqualTo(HttpStatus.CONTENT_TOO_LARGE))
			.withMessageContaining("has a body of more than 4096 bytes");
		assertThat(read.get()).isEqualTo(4097);
	}

	@Test
	void aDeclaredContentLengthBeyondTheLimitIsRefusedBeforeAnyByteIsRead() {
		AtomicLong read = new AtomicLong();
		MockHttpServletRequest request = new MockHttpServletRequest("PUT", "/transfers") {

			@Override
			public ServletInputStream getInputStream() {
				return new EndlessStream(read);
			}

			@Override
			public long getContentLengthLong() {
				return 5_000_000_000L;
			}

		};
		request.setContentType("application/x-www-form-urlencoded");
		assertThatExceptionOfType(RejectedRequestException.class).isThrownBy(() -> this.fingerprinter.read(request))
			.withMessageContaining("declares a body of 5000000000 bytes");
		assertThat(read.get()).isZero();
	}

	@Test
	void theHandlerReadsTheBufferedBodyAgainAndAStreamedPartDigestsLikeAWholeOne() throws Exception {
		MockHttpServletRequest request = new MockHttpServletRequest("POST", "/orders");
		request.setContentType("application/json");
		request.setContent("{\"customer\":\"alice\"}".getBytes(StandardCharsets.UTF_8));
		FingerprintedRequest read = this.fingerprinter.read(request);
		assertThat(StreamUtils.copyToString(read.request().getInputStream(), StandardCharsets.UTF_8))
			.isEqualTo("{\"customer\":\"alice\"}");
		assertThat(read.request().getReader().readLine()).isEqualTo("{\"customer\":\"alice\"}");
		byte[] body = "{\"customer\":\"alice\"}".getBytes(StandardCharsets.UTF_8);
		assertThat(read.fingerprint()).isEqualTo(RequestFingerprinter.fingerprint("POST", "/orders", body))
			.isEqualTo(Fingerprints.builder()
				.part("POST")
				.part("/orders")
				.part(new java.io.ByteArrayInputStream(body), body.length)
				.sha256());
	}

	/** Zeros for ever, counting what is read. */
	private static final class EndlessStream extends ServletInputStream {

		private final AtomicLong read;

		EndlessStream(AtomicLong read) {
			this.read = read;
		}

		@Override
		public int read() {
			this.read.incrementAndGet();
			return 0;
		}

		@Override
		public int read(byte[] buffer, int offset, int length) {
			this.read.addAndGet(length);
			return length;
		}

		@Override
		public boolean isFinished() {
			return false;
		}

		@Override
		public boolean isReady() {
			return true;
		}

		@Override
		public void setReadListener(ReadListener listener) {
			throw new UnsupportedOperationException();
		}

	}

}
