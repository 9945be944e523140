package io.ductor.kafka;

import java.util.ArrayList;
import java.util.List;

import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Configuration;

import io.ductor.test.TestDatabase;

/** Starts an application with Ductor, Spring Kafka and the given user configuration. */
final class KafkaTestApp {

	private KafkaTestApp() {
	}

	static ConfigurableApplicationContext start(TestDatabase database, KafkaBroker broker, Class<?> user,
			String... properties) {
		List<String> all = new ArrayList<>(List.of(database.springProperties()));
		all.addAll(List.of("spring.main.banner-mode=off", "logging.level.io.zonky=warn",
				"logging.level.org.apache.kafka=warn", "spring.kafka.bootstrap-servers=" + broker.bootstrapServers(),
				"spring.kafka.consumer.auto-offset-reset=earliest", "ductor.effects.drainer.poll-interval=100ms",
				"ductor.effects.backoff.initial=100ms", "ductor.effects.backoff.max=1s",
				"ductor.effects.reconciler.interval=1h", "ductor.retention.interval=1h", "ductor.kafka.send-timeout=3s",
				"spring.datasource.hikari.maximum-pool-size=12"));
		all.addAll(List.of(properties));
		return new SpringApplicationBuilder(Infrastructure.class, user).web(WebApplicationType.NONE)
			.properties(all.toArray(String[]::new))
			.run();
	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	static class Infrastructure {

	}

}
