package io.ductor.modulith.internal;

import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.modulith.events.CompletedEventPublications;
import org.springframework.modulith.events.config.EventPublicationAutoConfiguration;

import io.ductor.autoconfigure.DuctorAutoConfiguration;
import io.ductor.effect.autoconfigure.DuctorEffectsAutoConfiguration;
import io.ductor.jdbc.internal.DuctorDatabase;
import io.ductor.modulith.autoconfigure.DuctorModulithAutoConfiguration;
import io.ductor.test.PostgresExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The application's publication store replaces Ductor's, and Ductor's publication
 * registry then reads through it, against PostgreSQL.
 */
class ReplaceablePublicationStoreTest {

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
	void theApplicationsPublicationStoreIsWhatTheRegistryReads() {
		this.runner.withUserConfiguration(UserStore.class).run((context) -> {
			assertThat(context).hasNotFailed();
			CountingStore store = context.getBean(CountingStore.class);
			assertThat(context.getBean(PublicationStore.class)).isSameAs(store);
			assertThat(context.getBean(CompletedEventPublications.class).findAll()).isEmpty();
			assertThat(store.completedReads).hasValue(1);
		});
	}

	@Configuration(proxyBeanMethods = false)
	static class UserStore {

		@Bean
		CountingStore userPublicationStore(DuctorDatabase database, EventCodec events) {
			return new CountingStore(database, events);
		}

	}

	static class CountingStore extends PublicationStore {

		final AtomicInteger completedReads = new AtomicInteger();

		CountingStore(DuctorDatabase database, EventCodec events) {
			super(database.dataSource(), events);
		}

		@Override
		List<Row> completed() {
			this.completedReads.incrementAndGet();
			return super.completed();
		}

	}

}
