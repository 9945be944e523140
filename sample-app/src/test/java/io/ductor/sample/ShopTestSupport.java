package io.ductor.sample;

import java.util.ArrayList;
import java.util.List;

import javax.sql.DataSource;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.simple.JdbcClient;

import io.ductor.test.PostgresExtension;

/**
 * The shop, started as {@code main} would start it, on a free port and on a fresh
 * database of its own per test class, with the simulated receivers well-behaved unless a
 * test injects a fault. It is started and closed by the test class itself (not cached by
 * Spring's test framework), so that it is closed before its database is dropped.
 */
abstract class ShopTestSupport {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	static ConfigurableApplicationContext shop;

	@BeforeAll
	static void startShop() {
		List<String> args = new ArrayList<>(List.of("--server.port=0", "--spring.datasource.url=" + postgres.jdbcUrl(),
				"--spring.datasource.username=" + postgres.username(), "--sample.gateway.failure-rate=0",
				"--sample.gateway.latency=0s", "--sample.mailer.failure-rate=0", "--sample.mailer.latency=0s",
				"--ductor.effects.backoff.initial=50ms", "--ductor.effects.backoff.max=200ms", SampleKafka.argument()));
		if (postgres.password() != null) {
			args.add("--spring.datasource.password=" + postgres.password());
		}
		shop = SpringApplication.run(SampleApplication.class, args.toArray(String[]::new));
	}

	@AfterAll
	static void stopShop() {
		if (shop != null) {
			shop.close();
			shop = null;
		}
	}

	static int port() {
		return ((WebServerApplicationContext) shop).getWebServer().getPort();
	}

	static <T> T bean(Class<T> type) {
		return shop.getBean(type);
	}

	static JdbcClient jdbc() {
		return JdbcClient.create(bean(DataSource.class));
	}

}
