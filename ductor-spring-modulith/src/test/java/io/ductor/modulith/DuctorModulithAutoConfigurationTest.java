package io.ductor.modulith;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration;
import org.springframework.modulith.events.CompletedEventPublications;
import org.springframework.modulith.events.EventExternalizationConfiguration;
import org.springframework.modulith.events.IncompleteEventPublications;
import org.springframework.modulith.events.config.EventExternalizationAutoConfiguration;
import org.springframework.modulith.events.config.EventPublicationAutoConfiguration;
import org.springframework.modulith.events.core.EventPublicationRegistry;
import org.springframework.modulith.events.core.EventPublicationRepository;

import io.ductor.amqp.DurableRabbit;
import io.ductor.autoconfigure.DuctorAutoConfiguration;
import io.ductor.effect.autoconfigure.DuctorEffectsAutoConfiguration;
import io.ductor.modulith.autoconfigure.DuctorModulithAutoConfiguration;
import io.ductor.modulith.autoconfigure.DuctorModulithExternalizationAutoConfiguration;
import io.ductor.modulith.internal.DuctorEventPublicationRegistry;
import io.ductor.modulith.internal.DuctorListenerFactory;
import io.ductor.modulith.internal.EventRelay;
import io.ductor.modulith.internal.RelayEventExternalizer;
import io.ductor.test.PostgresExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.mockito.Mockito.mock;

class DuctorModulithAutoConfigurationTest {

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
	void ductorIsModulithsRegistryAndItsListenerFactoryComesBeforeSpringsAndModuliths() {
		this.runner.run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(context).getBean(EventPublicationRegistry.class)
				.isInstanceOf(DuctorEventPublicationRegistry.class);
			assertThat(context).getBean(CompletedEventPublications.class)
				.isSameAs(context.getBean(EventPublicationRegistry.class));
			assertThat(context).hasSingleBean(IncompleteEventPublications.class);
			assertThat(context.getBean(DuctorListenerFactory.class).getOrder()).isLessThan(25);
		});
	}

	@Test
	void backsOffWhenTheApplicationHasAPublicationRepository() {
		this.runner.withBean(EventPublicationRepository.class, () -> mock(EventPublicationRepository.class))
			.run((context) -> {
				assertThat(context).doesNotHaveBean(DuctorEventPublicationRegistry.class);
				assertThat(context).doesNotHaveBean(DuctorListenerFactory.class);
			});
	}

	@Test
	void backsOffWhenTheApplicationHasARegistry() {
		this.runner.withBean(EventPublicationRegistry.class, () -> mock(EventPublicationRegistry.class))
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(context).doesNotHaveBean(DuctorEventPublicationRegistry.class);
			});
	}

	@Test
	void turnedOffByProperty() {
		this.runner.withPropertyValues("ductor.modulith.enabled=false")
			.withBean(EventPublicationRegistry.class, () -> mock(EventPublicationRegistry.class))
			.run((context) -> assertThat(context).doesNotHaveBean(DuctorListenerFactory.class));
	}

	@Test
	void withoutModulithNothingIsConfigured() {
		new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class,
					DataSourceTransactionManagerAutoConfiguration.class, TransactionAutoConfiguration.class,
					DuctorAutoConfiguration.class, DuctorEffectsAutoConfiguration.class,
					DuctorModulithAutoConfiguration.class))
			.withPropertyValues(postgres.database().springProperties())
			.withPropertyValues("ductor.effects.drainer.enabled=false", "ductor.effects.reconciler.enabled=false")
			.withClassLoader(new FilteredClassLoader(EventPublicationRegistry.class))
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(context).doesNotHaveBean(DuctorListenerFactory.class);
			});
	}

	@Test
	void aCompletionModeOtherThanUpdateFailsStartUpNamingTheProperty() {
		this.runner.withPropertyValues("spring.modulith.events.completion-mode=delete")
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.rootCause()
				.hasMessageContaining("spring.modulith.events.completion-mode is delete"));
	}

	private final ApplicationContextRunner externalizing = this.runner
		.withConfiguration(AutoConfigurations.of(EventExternalizationAutoConfiguration.class,
				DuctorModulithExternalizationAutoConfiguration.class))
		.withBean(EventExternalizationConfiguration.class,
				() -> EventExternalizationConfiguration.externalizing()
					.select(EventExternalizationConfiguration.annotatedAsExternalized())
					.build())
		.withBean(DurableRabbit.class, () -> (message) -> "key");

	@Test
	void externalizedEventsGoThroughARelayWhenOneIsConfigured() {
		this.externalizing.run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(context).hasSingleBean(RelayEventExternalizer.class);
			assertThat(context).hasSingleBean(EventRelay.class);
		});
	}

	@Test
	void withoutARelayNothingIsExternalizedByDuctor() {
		this.runner
			.withConfiguration(AutoConfigurations.of(EventExternalizationAutoConfiguration.class,
					DuctorModulithExternalizationAutoConfiguration.class))
			.withBean(EventExternalizationConfiguration.class, EventExternalizationConfiguration::disabled)
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(context).doesNotHaveBean(RelayEventExternalizer.class);
			});
	}

	@Test
	void externalizationIsTurnedOffByDuctorsPropertyOrModuliths() {
		this.externalizing.withPropertyValues("ductor.modulith.externalization.enabled=false")
			.run((context) -> assertThat(context).doesNotHaveBean(RelayEventExternalizer.class));
		this.externalizing.withPropertyValues("spring.modulith.events.externalization.enabled=false")
			.run((context) -> assertThat(context).doesNotHaveBean(RelayEventExternalizer.class));
	}

	@Test
	void externalizationNeedsDuctorAsTheRegistry() {
		this.externalizing.withPropertyValues("ductor.modulith.enabled=false")
			.withBean(EventPublicationRegistry.class, () -> mock(EventPublicationRegistry.class))
			.run((context) -> assertThat(context).doesNotHaveBean(RelayEventExternalizer.class));
	}

}
