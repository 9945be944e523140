package io.ductor.modulith;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration;
import org.springframework.modulith.events.config.EventPublicationAutoConfiguration;

import io.ductor.autoconfigure.DuctorAutoConfiguration;
import io.ductor.effect.autoconfigure.DuctorEffectsAutoConfiguration;
import io.ductor.modulith.autoconfigure.DuctorModulithAutoConfiguration;
import io.ductor.test.PostgresExtension;

import static org.assertj.core.api.Assertions.assertThat;

/** Misspelled and unsupported settings of the Modulith integration fail start-up. */
class HostileModulithPropertiesTest {

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
	void anUnknownDuctorModulithPropertyFailsStartUp() {
		this.runner.withPropertyValues("ductor.modulith.enabeld=false")
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.hasStackTraceContaining("ductor.modulith.enabeld"));
		this.runner.withPropertyValues("ductor.modulith.externalisation.enabled=false")
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.hasStackTraceContaining("ductor.modulith.externalisation.enabled"));
	}

	@Test
	void theKnownPropertiesStartUp() {
		this.runner.withPropertyValues("ductor.modulith.enabled=true", "ductor.modulith.externalization.enabled=true")
			.run((context) -> assertThat(context).hasNotFailed());
	}

	@Test
	void theArchiveCompletionModeFailsStartUp() {
		this.runner.withPropertyValues("spring.modulith.events.completion-mode=ARCHIVE")
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.hasStackTraceContaining("spring.modulith.events.completion-mode is ARCHIVE"));
	}

}
