package io.ductor.amqp.internal;

import java.time.OffsetDateTime;

import org.jspecify.annotations.Nullable;

/**
 * What the relay tells about the messages it publishes ({@code ductor.messages.*}).
 */
public interface MessageMetrics {

	/** Tells nothing. */
	MessageMetrics NONE = new MessageMetrics() {
	};

	/**
	 * @param destination the exchange, or the queue for the default exchange
	 */
	default void sent(String destination) {
	}

	/**
	 * @param destination the exchange, or the queue for the default exchange
	 * @param due when the first attempt was due (the commit), or {@code null} on a retry
	 */
	default void acknowledged(String destination, @Nullable OffsetDateTime due) {
	}

	/**
	 * @param destination the exchange, or the queue for the default exchange
	 */
	default void returned(String destination) {
	}

	/**
	 * @param destination the exchange, or the queue for the default exchange
	 */
	default void failed(String destination) {
	}

}
