package io.ductor.actuate.internal;

import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CoderResult;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Base64;

/**
 * The start of a stored response body as an operator can read it: text when its bytes are
 * UTF-8 (a character cut at the end of the preview is left out), base64 when they are
 * not, or when the body has a content encoding such as gzip (an image, a compressed or
 * binary answer). Never a failure, whatever the bytes.
 *
 * @param start the first bytes, as text or base64
 * @param encoding {@value #TEXT} or {@value #BASE64}
 * @param truncated whether the body is longer than the preview
 */
record BodyPreview(String start, String encoding, boolean truncated) {

	static final String TEXT = "text";

	static final String BASE64 = "base64";

	/**
	 * @param start the body's first bytes
	 * @param size the body's size in bytes
	 * @param contentEncoding its {@code Content-Encoding}, or {@code null}
	 * @return the preview
	 */
	static BodyPreview of(byte[] start, int size, String contentEncoding) {
		boolean truncated = start.length < size;
		if (contentEncoding == null || contentEncoding.isBlank() || "identity".equalsIgnoreCase(contentEncoding)) {
			String text = utf8(start, truncated);
			if (text != null) {
				return new BodyPreview(text, TEXT, truncated);
			}
		}
		return new BodyPreview(Base64.getEncoder().encodeToString(start), BASE64, truncated);
	}

	/**
	 * @return the bytes as text, or {@code null} when they are not UTF-8 text; the bytes
	 * of a character the preview cut at its end are left out
	 */
	private static String utf8(byte[] bytes, boolean truncated) {
		CharsetDecoder decoder = StandardCharsets.UTF_8.newDecoder()
			.onMalformedInput(CodingErrorAction.REPORT)
			.onUnmappableCharacter(CodingErrorAction.REPORT);
		ByteBuffer in = ByteBuffer.wrap(bytes);
		CharBuffer out = CharBuffer.allocate(bytes.length);
		CoderResult result = decoder.decode(in, out, !truncated);
		if (result.isError() || in.remaining() > (truncated ? 3 : 0)) {
			return null;
		}
		String text = out.flip().toString();
		// NUL is valid UTF-8 but no text an operator reads
		return (text.indexOf('\u0000') < 0) ? text : null;
	}

}
