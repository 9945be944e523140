package io.ductor.docs;

import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration;

import io.ductor.autoconfigure.DuctorAutoConfiguration;
import io.ductor.effect.EffectConcurrency;
import io.ductor.effect.EffectOperations;
import io.ductor.effect.autoconfigure.DuctorEffectsAutoConfiguration;
import io.ductor.test.PostgresExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The effects and reconcilers the documentation declares pass Ductor's start-up checks
 * (key expressions, compensations with the effect's parameters, reconcilers whose
 * parameters follow the effect's), each page's beans on their own, as an application
 * would declare them.
 */
class DocumentedDeclarationsTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class,
				DataSourceTransactionManagerAutoConfiguration.class, TransactionAutoConfiguration.class,
				JacksonAutoConfiguration.class, DuctorAutoConfiguration.class, DuctorEffectsAutoConfiguration.class))
		.withPropertyValues(postgres.springProperties())
		.withPropertyValues("spring.datasource.hikari.maximum-pool-size=2", "ductor.effects.drainer.enabled=false",
				"ductor.effects.reconciler.enabled=false", "ductor.effects.alarm-scheduler.enabled=false",
				"ductor.retention.enabled=false");

	static Stream<Arguments> declarations() {
		return Stream.of(Arguments.of("README.md", new Class<?>[] { ReadmeSnippets.Payments.class }),
				Arguments.of("README.md", new Class<?>[] { ReadmeSnippets.ReceiptEffects.class }),
				Arguments.of("docs/effects.md",
						new Class<?>[] { EffectsPageSnippets.class, EffectsPageSnippets.PaymentGateway.class,
								EffectsPageSnippets.Legacy.class }),
				Arguments.of("docs/getting-started.md", new Class<?>[] { GettingStartedSnippets.OrderEffects.class }));
	}

	@ParameterizedTest(name = "{0}: {1}")
	@MethodSource("declarations")
	void theDocumentedEffectsAndReconcilersStart(String page, Class<?>[] beans) {
		ApplicationContextRunner runner = this.runner;
		for (Class<?> bean : beans) {
			runner = runner.withBean(bean);
		}
		runner.run((context) -> assertThat(context).hasNotFailed());
	}

	@Test
	void theDocumentedConcurrencyLimitHolds() {
		this.runner.withBean(EffectsPageSnippets.Legacy.class)
			.run((context) -> assertThat(context.getBean(EffectOperations.class).concurrency())
				.containsExactly(new EffectConcurrency("Legacy.submit", 5, 0)));
	}

}
