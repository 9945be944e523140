package io.ductor.sample.payment;

/**
 * The gateway refused a request before applying it (think
 * {@code 503 Service Unavailable}).
 */
public class GatewayUnavailableException extends RuntimeException {

	GatewayUnavailableException(String message) {
		super(message);
	}

}
