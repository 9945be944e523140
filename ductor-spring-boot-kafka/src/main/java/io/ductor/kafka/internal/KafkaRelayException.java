package io.ductor.kafka.internal;

import io.ductor.DuctorException;

/**
 * The broker did not acknowledge a relayed record; the intent is retried.
 */
public class KafkaRelayException extends DuctorException {

	public KafkaRelayException(String message, Throwable cause) {
		super(message, cause);
	}

}
