package io.ductor.idempotency;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The answer stored with a completed decision and replayed to duplicates: a status, a few
 * headers and a body. HTTP uses them as they are; other receivers choose their own status
 * codes.
 *
 * @param status the status (an HTTP status for web requests)
 * @param headers the stored headers, by name
 * @param body the body, possibly empty
 */
public record StoredResponse(int status, Map<String, List<String>> headers, byte[] body) {

	public StoredResponse {
		headers = Map.copyOf(Objects.requireNonNull(headers, "headers must not be null"));
		body = (body != null) ? body : new byte[0];
	}

	/**
	 * @param status the status
	 * @param body the body
	 * @return a response without headers
	 */
	public static StoredResponse of(int status, byte[] body) {
		return new StoredResponse(status, Map.of(), body);
	}

	/**
	 * @return the body decoded as UTF-8
	 */
	public String bodyAsString() {
		return new String(this.body, StandardCharsets.UTF_8);
	}

	@Override
	public boolean equals(Object other) {
		return other instanceof StoredResponse that && this.status == that.status && this.headers.equals(that.headers)
				&& Arrays.equals(this.body, that.body);
	}

	@Override
	public int hashCode() {
		return Objects.hash(this.status, this.headers, Arrays.hashCode(this.body));
	}

	@Override
	public String toString() {
		return "StoredResponse[status=" + this.status + ", headers=" + this.headers + ", body=" + this.body.length
				+ " bytes]";
	}

}
