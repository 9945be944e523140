package io.ductor.kafka.internal;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;

import io.ductor.autoconfigure.internal.DuctorConfigurationException;

/**
 * The configuration of the relay's producer: the application's producer configuration
 * (bootstrap servers, security, tuning) with String keys, byte[] values, {@code acks=all}
 * and idempotence on, and no transactional id. An application configuration that asks for
 * fewer acknowledgements or no idempotence fails start-up rather than being silently
 * overridden.
 */
public final class RelayProducerConfig {

	private RelayProducerConfig() {
	}

	/**
	 * @param application the application's producer configuration
	 * @param sendTimeout how long the relay waits for an acknowledgement: unless the
	 * application sets them, the producer blocks for metadata ({@code max.block.ms}) and
	 * retries a record ({@code delivery.timeout.ms}) no longer, so that a record given up
	 * on is not written much later
	 * @return the relay's
	 * @throws DuctorConfigurationException when the application's configuration
	 * contradicts what the relay needs
	 */
	public static Map<String, Object> of(Map<String, Object> application, Duration sendTimeout) {
		Object acks = application.get(ProducerConfig.ACKS_CONFIG);
		if (acks != null && !"all".equalsIgnoreCase(acks.toString().trim()) && !"-1".equals(acks.toString().trim())) {
			throw new DuctorConfigurationException(
					"The Kafka producer is configured with acks=" + acks + " (spring.kafka.producer.acks), but "
							+ "Ductor's relay completes a message only once every in-sync replica has it (acks=all)",
					"Remove spring.kafka.producer.acks or set it to 'all', or turn Ductor's Kafka outbox off with "
							+ "ductor.kafka.enabled=false");
		}
		Object idempotence = application.get(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG);
		if (idempotence != null && "false".equalsIgnoreCase(idempotence.toString().trim())) {
			throw new DuctorConfigurationException(
					"The Kafka producer is configured with enable.idempotence=false "
							+ "(spring.kafka.producer.properties.enable.idempotence), but Ductor's relay needs the "
							+ "idempotent producer so that its own retries neither duplicate nor reorder records",
					"Remove spring.kafka.producer.properties.enable.idempotence or set it to true, or turn Ductor's "
							+ "Kafka outbox off with ductor.kafka.enabled=false");
		}
		Object retries = application.get(ProducerConfig.RETRIES_CONFIG);
		if (retries != null && millis(retries, 1) == 0) {
			throw new DuctorConfigurationException(
					"The Kafka producer is configured with retries=0 (spring.kafka.producer.retries), but the "
							+ "idempotent producer of Ductor's relay needs retries",
					"Remove spring.kafka.producer.retries or set it above 0, or turn Ductor's Kafka outbox off with "
							+ "ductor.kafka.enabled=false");
		}
		Object inFlight = application.get(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION);
		if (inFlight != null && millis(inFlight, 5) > 5) {
			throw new DuctorConfigurationException(
					"The Kafka producer is configured with " + ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION
							+ "=" + inFlight + " (spring.kafka.producer.properties."
							+ ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION
							+ "), but the idempotent producer of Ductor's relay keeps order with at most 5",
					"Set it to 5 or less, or turn Ductor's Kafka outbox off with ductor.kafka.enabled=false");
		}
		Map<String, Object> relay = new HashMap<>(application);
		relay.remove(ProducerConfig.TRANSACTIONAL_ID_CONFIG);
		relay.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class);
		relay.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
		relay.put(ProducerConfig.ACKS_CONFIG, "all");
		relay.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
		relay.putIfAbsent(ProducerConfig.MAX_BLOCK_MS_CONFIG, sendTimeout.toMillis());
		if (!relay.containsKey(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG)) {
			long request = millis(relay.get(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG), 30_000);
			long linger = millis(relay.get(ProducerConfig.LINGER_MS_CONFIG), 5);
			// the producer refuses a delivery timeout below request timeout + linger
			relay.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG,
					(int) Math.min(Integer.MAX_VALUE, Math.max(sendTimeout.toMillis(), request + linger)));
		}
		Object clientId = application.get(ProducerConfig.CLIENT_ID_CONFIG);
		relay.put(ProducerConfig.CLIENT_ID_CONFIG, (clientId != null) ? clientId + "-ductor-relay" : "ductor-relay");
		return relay;
	}

	private static long millis(Object value, long otherwise) {
		return (value != null) ? Long.parseLong(value.toString().trim()) : otherwise;
	}

}
