package io.ductor.sample;

import io.opentelemetry.exporter.logging.LoggingSpanExporter;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.properties.ConfigurationPropertiesScan;
import org.springframework.context.annotation.Bean;

/**
 * Ductor's sample shop. {@code POST /orders} starts an order run whose ticks schedule
 * durable effects (stock reservation, payment, receipt); {@code /} shows the orders and
 * their effects. Without {@code spring.datasource.url} it starts its own PostgreSQL (see
 * {@link EmbeddedDatabaseConfiguration}); with it, it uses that database. Every request
 * is traced, and its spans (and those of the effects it records, whenever they run) are
 * written to the log.
 */
@SpringBootApplication
@ConfigurationPropertiesScan
public class SampleApplication {

	public static void main(String[] args) {
		SpringApplication.run(SampleApplication.class, args);
	}

	/**
	 * Finished spans go to the log: a console exporter, so the tour needs no tracing
	 * server.
	 */
	@Bean
	LoggingSpanExporter loggingSpanExporter() {
		return LoggingSpanExporter.create();
	}

}
