package io.ductor.idempotency.web.internal;

import java.io.BufferedReader;
import java.io.ByteArrayInputStream;
import java.io.InputStreamReader;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;

import jakarta.servlet.ReadListener;
import jakarta.servlet.ServletInputStream;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;

/**
 * A request whose body was read for its fingerprint: the handler reads the same bytes
 * again. Everything else (parameters, parts, headers) is the wrapped request's.
 */
public final class BufferedBodyRequest extends HttpServletRequestWrapper {

	private final byte[] body;

	BufferedBodyRequest(HttpServletRequest request, byte[] body) {
		super(request);
		this.body = body;
	}

	@Override
	public ServletInputStream getInputStream() {
		return new BodyStream(this.body);
	}

	@Override
	public BufferedReader getReader() {
		Charset charset = (getCharacterEncoding() != null) ? Charset.forName(getCharacterEncoding())
				: StandardCharsets.UTF_8;
		return new BufferedReader(new InputStreamReader(new ByteArrayInputStream(this.body), charset));
	}

	private static final class BodyStream extends ServletInputStream {

		private final ByteArrayInputStream body;

		BodyStream(byte[] body) {
			this.body = new ByteArrayInputStream(body);
		}

		@Override
		public int read() {
			return this.body.read();
		}

		@Override
		public int read(byte[] buffer, int offset, int length) {
			return this.body.read(buffer, offset, length);
		}

		@Override
		public boolean isFinished() {
			return this.body.available() == 0;
		}

		@Override
		public boolean isReady() {
			return true;
		}

		@Override
		public void setReadListener(ReadListener listener) {
			throw new UnsupportedOperationException("the body of an @Idempotent request is already buffered");
		}

	}

}
