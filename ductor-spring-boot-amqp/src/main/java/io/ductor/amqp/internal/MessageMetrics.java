package io.ductor.amqp.internal;

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
	 */
	default void acknowledged(String destination) {
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
