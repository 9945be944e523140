package io.ductor.reliability.depot;

import org.springframework.amqp.rabbit.config.SimpleRabbitListenerContainerFactory;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.amqp.autoconfigure.SimpleRabbitListenerContainerFactoryConfigurer;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.annotation.Bean;

/**
 * The consuming side of the RabbitMQ crash: a {@code @RabbitListener} with
 * {@code @IdempotentListener} ({@link Depot}) inserts every message it applies into
 * {@code parcel_applied}, in the transaction that records it as applied; the container
 * appends every raw delivery to {@code depot.delivery-log} before the listener runs
 * ({@link DeliveryLog}), so redeliveries show. The reliability suite's
 * {@code RabbitOutboxCrashTest} launches it in JVMs of its own and kills them with
 * SIGKILL.
 * <p>
 * Its configuration is {@code depot.yml}.
 */
@SpringBootApplication
public class DepotApplication {

	public static void main(String[] args) {
		new SpringApplicationBuilder(DepotApplication.class).web(WebApplicationType.NONE)
			.properties("spring.config.name=depot")
			.run(args);
	}

	/** Boot's container factory, with the delivery log and a quick reconnection. */
	@Bean
	SimpleRabbitListenerContainerFactory rabbitListenerContainerFactory(
			SimpleRabbitListenerContainerFactoryConfigurer configurer, ConnectionFactory connectionFactory,
			DeliveryLog deliveryLog) {
		SimpleRabbitListenerContainerFactory factory = new SimpleRabbitListenerContainerFactory();
		configurer.configure(factory, connectionFactory);
		factory.setAfterReceivePostProcessors(deliveryLog);
		// the default 5 s between attempts to reconnect would stretch every dropped
		// connection
		factory.setRecoveryInterval(500L);
		return factory;
	}

}
