package io.ductor.sample;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * Ductor's sample shop. Without {@code spring.datasource.url} it starts its own PostgreSQL
 * (see {@link EmbeddedDatabaseConfiguration}); with it, it uses that database.
 */
@SpringBootApplication
public class SampleApplication {

	public static void main(String[] args) {
		SpringApplication.run(SampleApplication.class, args);
	}

}
