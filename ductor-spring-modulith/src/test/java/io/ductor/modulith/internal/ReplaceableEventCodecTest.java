package io.ductor.modulith.internal;

import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import tools.jackson.databind.PropertyNamingStrategies;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.modulith.events.config.EventPublicationAutoConfiguration;
import org.springframework.modulith.events.core.EventPublicationRegistry;
import org.springframework.modulith.events.core.TargetEventPublication;
import org.springframework.transaction.event.TransactionalEventListener;
import org.springframework.transaction.support.TransactionTemplate;

import io.ductor.autoconfigure.DuctorAutoConfiguration;
import io.ductor.effect.autoconfigure.DuctorEffectsAutoConfiguration;
import io.ductor.modulith.ModulithPublications;
import io.ductor.modulith.autoconfigure.DuctorModulithAutoConfiguration;
import io.ductor.test.PostgresExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The application's event codec replaces Ductor's: a publication's event is written with
 * its mapper and read back with it, against PostgreSQL.
 */
class ReplaceableEventCodecTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class,
				DataSourceTransactionManagerAutoConfiguration.class, TransactionAutoConfiguration.class,
				DuctorAutoConfiguration.class, DuctorEffectsAutoConfiguration.class,
				DuctorModulithAutoConfiguration.class, EventPublicationAutoConfiguration.class))
		.withPropertyValues(postgres.database().springProperties())
		.withPropertyValues("ductor.effects.drainer.enabled=false", "ductor.effects.reconciler.enabled=false");

	@Test
	void theApplicationsCodecWritesAndReadsThePublishedEvent() {
		this.runner.withUserConfiguration(SnakeCaseEvents.class).run((context) -> {
			assertThat(context).hasNotFailed();
			String parcel = "parcel-" + System.nanoTime();
			context.getBean(TransactionTemplate.class)
				.executeWithoutResult((status) -> context.publishEvent(new ParcelSent(parcel)));
			List<String> stored = JdbcClient.create(context.getBean(javax.sql.DataSource.class))
				.sql("SELECT (payload->3)::text FROM eec_effect_intent WHERE effect_name = ? AND payload::text LIKE ?")
				.param(ModulithPublications.EFFECT_NAME)
				.param("%" + parcel + "%")
				.query(String.class)
				.list();
			assertThat(stored).singleElement().asString().contains("\"parcel_id\"");
			assertThat(context.getBean(EventPublicationRegistry.class).findIncompletePublications())
				.extracting(TargetEventPublication::getEvent)
				.contains(new ParcelSent(parcel));
		});
	}

	record ParcelSent(String parcelId) {
	}

	@Configuration(proxyBeanMethods = false)
	static class SnakeCaseEvents {

		@Bean
		EventCodec userEventCodec() {
			return new EventCodec(
					JsonMapper.builder().propertyNamingStrategy(PropertyNamingStrategies.SNAKE_CASE).build(),
					getClass().getClassLoader());
		}

		@Bean
		Courier courier() {
			return new Courier();
		}

	}

	static class Courier {

		@TransactionalEventListener
		void on(ParcelSent event) {
		}

	}

}
