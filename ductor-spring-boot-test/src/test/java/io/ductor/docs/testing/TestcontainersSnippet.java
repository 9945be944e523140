package io.ductor.docs.testing;

import org.testcontainers.junit.jupiter.Container;
import org.testcontainers.postgresql.PostgreSQLContainer;

import org.springframework.boot.testcontainers.service.connection.ServiceConnection;

/**
 * The Testcontainers field of {@code docs/testing.md}, compiled against Testcontainers
 * and Spring Boot (running it needs Docker, as {@code ServiceConnectionTest} does).
 */
class TestcontainersSnippet {

	// tag::testing-testcontainers[]
	@Container
	@ServiceConnection
	static PostgreSQLContainer postgres = new PostgreSQLContainer("postgres:17-alpine");

	// end::testing-testcontainers[]

}
