package io.ductor.idempotency.web.internal;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

import jakarta.servlet.ServletOutputStream;
import jakarta.servlet.WriteListener;
import jakarta.servlet.http.Cookie;
import jakarta.servlet.http.HttpServletResponse;
import jakarta.servlet.http.HttpServletResponseWrapper;

import org.springframework.http.HttpHeaders;
import org.springframework.util.LinkedCaseInsensitiveMap;

/**
 * Holds back an {@code @Idempotent} handler's response until its decision is made,
 * buffering at most {@code limit} bytes of body, also while Spring MVC writes it
 * asynchronously after the handler returned. Status and headers go to the real response
 * at once (nothing is committed while the body is held); the body, an error
 * ({@code sendError}) and a redirect reach the client only when {@link #send()} is
 * called.
 * <p>
 * A body larger than the limit is never buffered whole. With {@code passThrough}
 * (two-phase mode) the buffered part and everything after it go straight to the client
 * from then on: the response is sent but cannot be stored. Without it (one-transaction
 * mode, where nothing may reach the client before the commit) the buffer is dropped at
 * once and later writes are discarded; the caller answers with an error instead.
 */
public final class ResponseCapture extends HttpServletResponseWrapper {

	/**
	 * Statuses that are never replayed: a refusal is about the caller, not about the
	 * request.
	 */
	private static final Set<Integer> REFUSALS = Set.of(401, 403, 407, 429);

	private final int limit;

	private final boolean passThrough;

	/** The held body; {@code null} once it overflowed. */
	private ByteArrayOutputStream buffer = new ByteArrayOutputStream(256);

	private boolean overflowed;

	private boolean cookieSet;

	private Integer errorStatus;

	private String errorMessage;

	private ServletOutputStream stream;

	private PrintWriter writer;

	/**
	 * The headers the response had before the handler ran (set by filters before this
	 * one, a session cookie among them): theirs, not the handler's, so never stored nor
	 * taken for a cookie the handler set, and kept when the handler's answer is
	 * discarded.
	 */
	private final Map<String, List<String>> before = new LinkedCaseInsensitiveMap<>();

	ResponseCapture(HttpServletResponse response, int limit, boolean passThrough) {
		super(response);
		this.limit = limit;
		this.passThrough = passThrough;
		for (String name : response.getHeaderNames()) {
			this.before.putIfAbsent(name, List.copyOf(response.getHeaders(name)));
		}
	}

	/**
	 * @return the values of a header that the handler's dispatch wrote: those the
	 * response had before it ran are left out
	 */
	List<String> handlerHeaders(String name) {
		List<String> values = new ArrayList<>(getHeaders(name));
		for (String earlier : this.before.getOrDefault(name, List.of())) {
			values.remove(earlier);
		}
		return values;
	}

	/**
	 * @return whether the body grew past the limit (and was passed through or dropped)
	 */
	boolean overflowed() {
		flushWriter();
		return this.overflowed;
	}

	/**
	 * @return the status the handler answered, including one sent with {@code sendError}
	 */
	@Override
	public int getStatus() {
		return (this.errorStatus != null) ? this.errorStatus : super.getStatus();
	}

	/**
	 * @return whether the handler's dispatch set a cookie ({@code Set-Cookie}, a session
	 * it created among them); a cookie a filter before it set is not the handler's
	 */
	boolean setsCookie() {
		return this.cookieSet || !handlerHeaders(HttpHeaders.SET_COOKIE).isEmpty();
	}

	/**
	 * @return whether the handler ended with {@code sendError} (a
	 * {@code ResponseStatusException}, an {@code @ResponseStatus} exception, Spring MVC's
	 * own 4xx): the container renders its body after the filter, so it cannot be stored
	 */
	boolean errorSent() {
		return this.errorStatus != null;
	}

	/**
	 * @return whether the status is a refusal that must never be replayed (401, 403, 407,
	 * 429)
	 */
	boolean refusal() {
		return REFUSALS.contains(getStatus());
	}

	/**
	 * @return the held body (empty after {@code sendError}); only when it did not
	 * overflow
	 */
	byte[] body() {
		flushWriter();
		if (this.overflowed) {
			throw new IllegalStateException("the body overflowed the limit of " + this.limit + " bytes");
		}
		return this.buffer.toByteArray();
	}

	/**
	 * Drop what the handler answered, its status and headers included, so that another
	 * answer can be written; headers set before it ran stay.
	 */
	void discard() {
		this.buffer = null;
		this.overflowed = true;
		this.errorStatus = null;
		this.errorMessage = null;
		HttpServletResponse response = (HttpServletResponse) getResponse();
		response.reset();
		this.before.forEach((name, values) -> values.forEach((value) -> response.addHeader(name, value)));
	}

	/** Send what the handler answered to the client. */
	void send() throws IOException {
		flushWriter();
		HttpServletResponse response = (HttpServletResponse) getResponse();
		if (this.errorStatus != null) {
			if (this.errorMessage != null) {
				response.sendError(this.errorStatus, this.errorMessage);
			}
			else {
				response.sendError(this.errorStatus);
			}
			return;
		}
		if (this.overflowed) {
			if (this.passThrough) {
				response.flushBuffer();
			}
			return;
		}
		byte[] body = this.buffer.toByteArray();
		this.buffer = null;
		response.setContentLength(body.length);
		response.getOutputStream().write(body);
	}

	private void flushWriter() {
		if (this.writer != null) {
			this.writer.flush();
		}
	}

	private void write(byte[] bytes, int offset, int length) throws IOException {
		if (this.overflowed) {
			if (this.passThrough) {
				getResponse().getOutputStream().write(bytes, offset, length);
			}
			return;
		}
		if (this.buffer.size() + (long) length <= this.limit) {
			this.buffer.write(bytes, offset, length);
			return;
		}
		this.overflowed = true;
		ByteArrayOutputStream held = this.buffer;
		this.buffer = null;
		if (this.passThrough) {
			ServletOutputStream out = getResponse().getOutputStream();
			held.writeTo(out);
			out.write(bytes, offset, length);
		}
	}

	@Override
	public ServletOutputStream getOutputStream() {
		if (this.stream == null) {
			this.stream = new CaptureStream();
		}
		return this.stream;
	}

	@Override
	public PrintWriter getWriter() {
		if (this.writer == null) {
			String encoding = getCharacterEncoding();
			Charset charset = (encoding != null) ? Charset.forName(encoding) : StandardCharsets.ISO_8859_1;
			this.writer = new PrintWriter(new OutputStreamWriter(getOutputStream(), charset));
		}
		return this.writer;
	}

	/**
	 * Ignored: {@link #send()} sets the length of a held body itself, and a
	 * passed-through body is sent chunked, so that the client sees its end only once the
	 * decision is settled.
	 */
	@Override
	public void setContentLength(int length) {
	}

	@Override
	public void setContentLengthLong(long length) {
	}

	@Override
	public void setHeader(String name, String value) {
		if (!HttpHeaders.CONTENT_LENGTH.equalsIgnoreCase(name)) {
			super.setHeader(name, value);
		}
	}

	@Override
	public void addHeader(String name, String value) {
		if (!HttpHeaders.CONTENT_LENGTH.equalsIgnoreCase(name)) {
			super.addHeader(name, value);
		}
	}

	@Override
	public void setIntHeader(String name, int value) {
		if (!HttpHeaders.CONTENT_LENGTH.equalsIgnoreCase(name)) {
			super.setIntHeader(name, value);
		}
	}

	@Override
	public void addIntHeader(String name, int value) {
		if (!HttpHeaders.CONTENT_LENGTH.equalsIgnoreCase(name)) {
			super.addIntHeader(name, value);
		}
	}

	@Override
	public void addCookie(Cookie cookie) {
		this.cookieSet = true;
		super.addCookie(cookie);
	}

	@Override
	public void sendError(int status) {
		sendError(status, null);
	}

	@Override
	public void sendError(int status, String message) {
		// held like the body: the container renders the error page once the response is
		// sent
		resetBuffer();
		this.errorStatus = status;
		this.errorMessage = message;
	}

	@Override
	public void sendRedirect(String location) {
		sendRedirect(location, HttpServletResponse.SC_FOUND, true);
	}

	@Override
	public void sendRedirect(String location, int status) {
		sendRedirect(location, status, true);
	}

	@Override
	public void sendRedirect(String location, boolean clearBuffer) {
		sendRedirect(location, HttpServletResponse.SC_FOUND, clearBuffer);
	}

	@Override
	public void sendRedirect(String location, int status, boolean clearBuffer) {
		if (clearBuffer) {
			resetBuffer();
		}
		setStatus(status);
		setHeader(HttpHeaders.LOCATION, location);
	}

	@Override
	public void flushBuffer() throws IOException {
		flushWriter();
		if (this.overflowed && this.passThrough) {
			getResponse().flushBuffer();
		}
		// otherwise nothing may reach the client before the decision
	}

	@Override
	public boolean isCommitted() {
		return (this.overflowed && this.passThrough) && getResponse().isCommitted();
	}

	@Override
	public void resetBuffer() {
		if (this.overflowed && this.passThrough) {
			getResponse().resetBuffer();
			return;
		}
		if (!this.overflowed) {
			this.buffer.reset();
		}
	}

	@Override
	public void reset() {
		getResponse().reset();
		this.errorStatus = null;
		this.errorMessage = null;
		if (!this.overflowed) {
			this.buffer.reset();
		}
	}

	private final class CaptureStream extends ServletOutputStream {

		@Override
		public void write(int b) throws IOException {
			ResponseCapture.this.write(new byte[] { (byte) b }, 0, 1);
		}

		@Override
		public void write(byte[] bytes, int offset, int length) throws IOException {
			ResponseCapture.this.write(bytes, offset, length);
		}

		@Override
		public boolean isReady() {
			return true;
		}

		@Override
		public void setWriteListener(WriteListener listener) {
			throw new UnsupportedOperationException(
					"the body of an @Idempotent handler is held until its decision: write it with blocking I/O");
		}

	}

}
