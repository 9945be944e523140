package io.ductor.kafka.internal;

import java.time.Duration;
import java.time.OffsetDateTime;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import org.jspecify.annotations.Nullable;

/**
 * The relay's meters: {@code ductor.messages.sent}, {@code ductor.messages.acknowledged},
 * {@code ductor.messages.failed} (tags {@code broker}, {@code destination}) and the
 * {@code ductor.messages.relay.lag} timer from the commit to the acknowledgement.
 */
public class MicrometerKafkaRelayMetrics implements KafkaRelay.KafkaRelayMetrics {

	private static final String BROKER = "kafka";

	private final MeterRegistry registry;

	public MicrometerKafkaRelayMetrics(MeterRegistry registry) {
		this.registry = registry;
	}

	@Override
	public void sent(String topic) {
		counter("ductor.messages.sent", "Messages the relay handed to the broker (attempts)", topic).increment();
	}

	@Override
	public void acknowledged(String topic, @Nullable OffsetDateTime due) {
		counter("ductor.messages.acknowledged", "Messages the broker acknowledged", topic).increment();
		if (due != null) {
			Duration lag = Duration.between(due.toInstant(), java.time.Instant.now());
			Timer.builder("ductor.messages.relay.lag")
				.description("From the commit that recorded a message to the broker's acknowledgement of its "
						+ "first attempt")
				.tag("broker", BROKER)
				.tag("destination", topic)
				.register(this.registry)
				.record(lag.isNegative() ? Duration.ZERO : lag);
		}
	}

	@Override
	public void failed(String topic) {
		counter("ductor.messages.failed", "Relay attempts the broker did not acknowledge", topic).increment();
	}

	private Counter counter(String name, String description, String topic) {
		return Counter.builder(name)
			.description(description)
			.tag("broker", BROKER)
			.tag("destination", topic)
			.register(this.registry);
	}

}
