package io.ductor.idempotency.web.internal;

import java.util.Collections;
import java.util.List;

import jakarta.servlet.http.HttpServletRequest;

import io.ductor.idempotency.IdempotentRequest;
import io.ductor.idempotency.InvalidIdempotencyKeyException;

/**
 * Reads the idempotency key from its request header: an sf-string ({@code "..."}, as the
 * draft specifies) or a bare value, sent once.
 */
public final class IdempotencyKeyHeader {

	private final String headerName;

	/**
	 * @param headerName the request header carrying the key ({@code Idempotency-Key})
	 */
	IdempotencyKeyHeader(String headerName) {
		this.headerName = headerName;
	}

	/**
	 * The key of a request.
	 * @param request the request
	 * @param required whether a request without a key is refused
	 * @return the key; empty when the request opts out
	 * @throws InvalidIdempotencyKeyException when the header is missing but required,
	 * repeated, empty but required, or malformed
	 */
	String key(HttpServletRequest request, boolean required) {
		return key(Collections.list(request.getHeaders(this.headerName)), required);
	}

	/**
	 * The key from the values of the header.
	 * @param values every value of the header in the request, in order
	 * @param required whether a request without a key is refused
	 * @return the key; empty when the request opts out
	 * @throws InvalidIdempotencyKeyException naming the problem and the header
	 */
	String key(List<String> values, boolean required) {
		if (values.isEmpty()) {
			if (required) {
				throw new InvalidIdempotencyKeyException(
						"This request requires an idempotency key in the " + this.headerName + " header");
			}
			return "";
		}
		if (values.size() > 1) {
			throw new InvalidIdempotencyKeyException(
					"The " + this.headerName + " header must be sent once, not " + values.size() + " times");
		}
		String value = values.get(0).strip();
		if (value.length() >= 2 && value.startsWith("\"") && value.endsWith("\"")) {
			value = value.substring(1, value.length() - 1);
			if (value.contains("\"") || value.contains("\\")) {
				throw new InvalidIdempotencyKeyException(
						"The " + this.headerName + " header must not contain escaped characters");
			}
		}
		if (value.isEmpty() && required) {
			throw new InvalidIdempotencyKeyException("The " + this.headerName + " header must not be empty");
		}
		try {
			return IdempotentRequest.checkKey(value);
		}
		catch (InvalidIdempotencyKeyException ex) {
			throw new InvalidIdempotencyKeyException(
					"The " + this.headerName + " header is malformed: " + ex.getMessage());
		}
	}

}
