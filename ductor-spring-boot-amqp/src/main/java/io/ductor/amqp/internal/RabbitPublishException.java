package io.ductor.amqp.internal;

/**
 * A message the broker did not confirm: returned as unroutable, negatively acknowledged,
 * not confirmed in time, or not sent at all. The attempt fails and is retried.
 */
public class RabbitPublishException extends RuntimeException {

	private static final long serialVersionUID = 1L;

	RabbitPublishException(String message) {
		super(message);
	}

	RabbitPublishException(String message, Throwable cause) {
		super(message, cause);
	}

}
