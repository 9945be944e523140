package io.ductor.reliability.shipments;

import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.builder.SpringApplicationBuilder;

/**
 * The producing side of the Kafka crash: producer threads ({@link Shippers}) each run
 * transactions that insert a {@code shipment} row and publish it with
 * {@code DurableKafka.send("shipments", key, {id, key, seq})}; some roll back on purpose
 * after the send. Per record key, {@code seq} is taken from a counter row locked in the
 * same transaction, so it increases in commit order. The relay of this application sends
 * the messages after the commits. The reliability suite's {@code KafkaOutboxCrashTest}
 * launches it in JVMs of its own and kills them with SIGKILL.
 * <p>
 * Its configuration is {@code shipments.yml}.
 */
@SpringBootApplication
public class ShipmentsApplication {

	public static void main(String[] args) {
		new SpringApplicationBuilder(ShipmentsApplication.class).web(WebApplicationType.NONE)
			.properties("spring.config.name=shipments")
			.run(args);
	}

}
