package io.ductor.idempotency.web.internal;

import org.springframework.http.HttpStatus;

/**
 * An {@code @Idempotent} request refused before it is reserved or handled: too large, or
 * a body that cannot be read. Its message is the problem's detail.
 */
public final class RejectedRequestException extends Exception {

	private static final long serialVersionUID = 1L;

	private final HttpStatus status;

	RejectedRequestException(HttpStatus status, String message, Throwable cause) {
		super(message, cause);
		this.status = status;
	}

	/**
	 * @return the status to answer with
	 */
	HttpStatus status() {
		return this.status;
	}

}
