package io.ductor.reliability.dispatch;

import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.builder.SpringApplicationBuilder;

/**
 * The producing side of the RabbitMQ crash: dispatcher threads ({@link Dispatchers}) each
 * run transactions that insert a {@code parcel} row and publish it with
 * {@code DurableRabbit.send(exchange, key, {id, key, seq})}, the routing key being the
 * ordering key; some roll back on purpose after the send. Per routing key, {@code seq} is
 * taken from a counter row locked in the same transaction, so it increases in commit
 * order. The relay of this application publishes the messages after the commits. The
 * reliability suite's {@code RabbitOutboxCrashTest} launches it in JVMs of its own and
 * kills them with SIGKILL.
 * <p>
 * Its configuration is {@code dispatch.yml}.
 */
@SpringBootApplication
public class DispatchApplication {

	public static void main(String[] args) {
		new SpringApplicationBuilder(DispatchApplication.class).web(WebApplicationType.NONE)
			.properties("spring.config.name=dispatch")
			.run(args);
	}

}
