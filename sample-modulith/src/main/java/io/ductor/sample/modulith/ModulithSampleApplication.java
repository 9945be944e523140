package io.ductor.sample.modulith;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * A two-module Spring Modulith application on Ductor: the {@code order} module completes
 * orders and publishes {@code OrderCompleted}; the {@code inventory} module takes the
 * stock out with an {@code @ApplicationModuleListener}. Each publication is a Ductor
 * intent recorded with the order and run by Ductor's drainer; the externalized event
 * leaves through Ductor's Kafka relay when {@code ductor.kafka.enabled} is on. Without
 * {@code spring.datasource.url} it starts its own PostgreSQL (see
 * {@link EmbeddedDatabaseConfiguration}).
 */
@SpringBootApplication
public class ModulithSampleApplication {

	public static void main(String[] args) {
		SpringApplication.run(ModulithSampleApplication.class, args);
	}

}
