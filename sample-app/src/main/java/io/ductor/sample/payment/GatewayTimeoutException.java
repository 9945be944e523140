package io.ductor.sample.payment;

/**
 * The gateway's answer never arrived (think a read timeout). The charge may well have
 * been applied: only asking again with the same idempotency key tells.
 */
public class GatewayTimeoutException extends RuntimeException {

	GatewayTimeoutException(String message) {
		super(message);
	}

}
