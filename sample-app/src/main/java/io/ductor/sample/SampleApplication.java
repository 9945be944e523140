package io.ductor.sample;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.properties.ConfigurationPropertiesScan;

/**
 * Ductor's sample shop. {@code POST /orders} starts an order run whose ticks schedule durable
 * effects (stock reservation, payment, receipt); {@code /} shows the orders and their effects.
 * Without {@code spring.datasource.url} it starts its own PostgreSQL (see
 * {@link EmbeddedDatabaseConfiguration}); with it, it uses that database.
 */
@SpringBootApplication
@ConfigurationPropertiesScan
public class SampleApplication {

	public static void main(String[] args) {
		SpringApplication.run(SampleApplication.class, args);
	}

}
