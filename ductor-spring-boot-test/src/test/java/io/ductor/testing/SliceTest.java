package io.ductor.testing;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.transaction.support.TransactionTemplate;

import io.ductor.effect.DurableEffect;
import io.ductor.test.PostgresExtension;
import io.ductor.testing.bakery.BakeryDatabase;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * On a slice that imports only the data source's auto-configurations (no
 * {@code @EnableAutoConfiguration}), the annotation brings Ductor and the tester.
 */
@SpringBootTest(classes = SliceTest.Slice.class)
@AutoConfigureDuctorTester
class SliceTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	@DynamicPropertySource
	static void database(DynamicPropertyRegistry registry) {
		BakeryDatabase.register(postgres.database(), registry);
	}

	@Autowired
	DuctorTester ductor;

	@Autowired
	Greeter greeter;

	@Autowired
	TransactionTemplate transactions;

	@Test
	void theSliceGetsDuctorAndTheTester() {
		this.transactions.executeWithoutResult((status) -> this.greeter.greet("slice"));
		assertThat(this.ductor.drain()).hasSize(1);
		this.ductor.assertEffects().hasOne("greet").hasKey("greet:slice").isCompleted();
		assertThat(this.greeter.greeted()).containsExactly("slice");
	}

	@Configuration(proxyBeanMethods = false)
	@ImportAutoConfiguration({ DataSourceAutoConfiguration.class, DataSourceTransactionManagerAutoConfiguration.class,
			TransactionAutoConfiguration.class, JacksonAutoConfiguration.class })
	static class Slice {

		@Bean
		Greeter greeter() {
			return new Greeter();
		}

	}

	public static class Greeter {

		private final List<String> greeted = new CopyOnWriteArrayList<>();

		@DurableEffect(name = "greet", key = "'greet:' + #name")
		public void greet(String name) {
			this.greeted.add(name);
		}

		public List<String> greeted() {
			return this.greeted;
		}

	}

}
