package io.ductor.amqp.internal;

import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import org.jspecify.annotations.Nullable;

/**
 * Counts the relay's messages in Micrometer: {@code ductor.messages.sent},
 * {@code .acknowledged}, {@code .returned} and {@code .failed}, tagged
 * {@code broker=rabbitmq} and {@code destination}, and the
 * {@code ductor.messages.relay.lag} timer from the commit to the confirm of a message's
 * first attempt.
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
	public void acknowledged(String destination, @Nullable OffsetDateTime due) {
		counter("ductor.messages.acknowledged", "Messages the broker confirmed", destination).increment();
		if (due != null) {
			Duration lag = Duration.between(due.toInstant(), Instant.now());
			Timer.builder("ductor.messages.relay.lag")
				.description("From the commit that recorded a message to the broker's confirm of its first attempt")
				.tag("broker", "rabbitmq")
				.tag("destination", destination)
				.register(this.registry)
				.record(lag.isNegative() ? Duration.ZERO : lag);
		}
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
