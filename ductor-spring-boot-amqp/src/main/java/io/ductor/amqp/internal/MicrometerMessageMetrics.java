package io.ductor.amqp.internal;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;

/**
 * Counts the relay's messages in Micrometer: {@code ductor.messages.sent},
 * {@code .acknowledged}, {@code .returned} and {@code .failed}, tagged
 * {@code broker=rabbitmq} and {@code destination}.
 */
public class MicrometerMessageMetrics implements MessageMetrics {

	private final MeterRegistry registry;

	public MicrometerMessageMetrics(MeterRegistry registry) {
		this.registry = registry;
	}

	@Override
	public void sent(String destination) {
		counter("ductor.messages.sent", "Messages the relay handed to the broker", destination).increment();
	}

	@Override
	public void acknowledged(String destination) {
		counter("ductor.messages.acknowledged", "Messages the broker confirmed", destination).increment();
	}

	@Override
	public void returned(String destination) {
		counter("ductor.messages.returned", "Messages the broker returned as unroutable", destination).increment();
	}

	@Override
	public void failed(String destination) {
		counter("ductor.messages.failed",
				"Messages the broker did not confirm: nacked, not confirmed in time, or " + "not sent", destination)
			.increment();
	}

	private Counter counter(String name, String description, String destination) {
		return Counter.builder(name)
			.description(description)
			.baseUnit("messages")
			.tag("broker", "rabbitmq")
			.tag("destination", destination)
			.register(this.registry);
	}

}
