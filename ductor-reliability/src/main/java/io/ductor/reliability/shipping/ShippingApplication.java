package io.ductor.reliability.shipping;

import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.builder.SpringApplicationBuilder;

/**
 * The consuming side of the Kafka crash: a {@code @KafkaListener} with
 * {@code @IdempotentListener} ({@link Shipping}) inserts every message it applies into
 * {@code applied}, in the transaction that records it as applied; a record interceptor
 * appends every raw delivery to {@code shipping.delivery-log} before the listener runs,
 * so redeliveries show. The reliability suite's {@code KafkaOutboxCrashTest} launches it
 * in JVMs of its own and kills them with SIGKILL.
 * <p>
 * Its configuration is {@code shipping.yml}.
 */
@SpringBootApplication
public class ShippingApplication {

	public static void main(String[] args) {
		new SpringApplicationBuilder(ShippingApplication.class).web(WebApplicationType.NONE)
			.properties("spring.config.name=shipping")
			.run(args);
	}

}
