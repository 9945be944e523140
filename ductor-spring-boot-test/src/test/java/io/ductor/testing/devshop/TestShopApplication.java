package io.ductor.testing.devshop;

import org.springframework.boot.SpringApplication;

import io.ductor.testing.DuctorDevDatabase;

/**
 * The application's main on the test class path, with Ductor's development database, as
 * {@code docs/testing.md} shows it; {@code ./mvnw spring-boot:test-run} runs it.
 */
// tag::testing-dev-database[]
public class TestShopApplication {

	public static void main(String[] args) {
		SpringApplication.from(ShopApplication::main).with(DuctorDevDatabase.class).run(args);
	}

}
// end::testing-dev-database[]
