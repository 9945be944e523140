package io.ductor.testing.bakery;

import org.springframework.test.context.DynamicPropertyRegistry;

import io.ductor.test.TestDatabase;

/** Points a test's context at a database of Ductor's test harness. */
public final class BakeryDatabase {

	private BakeryDatabase() {
	}

	public static void register(TestDatabase database, DynamicPropertyRegistry registry) {
		registry.add("spring.datasource.url", database::jdbcUrl);
		registry.add("spring.datasource.username", database::username);
		registry.add("spring.datasource.password", () -> (database.password() != null) ? database.password() : "");
	}

}
