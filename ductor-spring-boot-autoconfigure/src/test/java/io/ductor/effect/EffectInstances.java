package io.ductor.effect;

import java.util.ArrayList;
import java.util.List;

import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Configuration;

import io.ductor.autoconfigure.DuctorAutoConfiguration;
import io.ductor.effect.autoconfigure.DuctorEffectsAutoConfiguration;
import io.ductor.observation.autoconfigure.DuctorObservationAutoConfiguration;
import io.ductor.test.TestDatabase;

/** Starts Ductor application instances on a test database, as an application would. */
final class EffectInstances {

	private EffectInstances() {
	}

	/**
	 * Start an instance with Ductor, the given user configuration and properties.
	 */
	static ConfigurableApplicationContext start(TestDatabase database, Class<?> userConfiguration,
			String... properties) {
		List<String> all = new ArrayList<>(List.of(database.springProperties()));
		all.addAll(List.of("spring.datasource.hikari.maximum-pool-size=12", "spring.main.banner-mode=off",
				"logging.level.io.zonky=warn"));
		all.addAll(List.of(properties));
		return new SpringApplicationBuilder(Infrastructure.class, userConfiguration).web(WebApplicationType.NONE)
			.properties(all.toArray(String[]::new))
			.run();
	}

	@Configuration(proxyBeanMethods = false)
	@ImportAutoConfiguration({ DataSourceAutoConfiguration.class, DataSourceTransactionManagerAutoConfiguration.class,
			TransactionAutoConfiguration.class, JacksonAutoConfiguration.class, DuctorAutoConfiguration.class,
			DuctorEffectsAutoConfiguration.class, DuctorObservationAutoConfiguration.class })
	static class Infrastructure {

	}

}
