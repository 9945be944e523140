package io.ductor.console;

import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import org.springframework.boot.actuate.autoconfigure.endpoint.EndpointAutoConfiguration;
import org.springframework.boot.actuate.autoconfigure.endpoint.web.WebEndpointAutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration;

import io.ductor.actuate.autoconfigure.DuctorEndpointAutoConfiguration;
import io.ductor.autoconfigure.DuctorAutoConfiguration;
import io.ductor.effect.autoconfigure.DuctorEffectsAutoConfiguration;
import io.ductor.test.PostgresExtension;
import io.ductor.test.docs.DocSnippets;
import io.ductor.test.docs.DocSnippets.Block;
import io.ductor.test.docs.DocumentedConfiguration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every YAML and properties block of {@code README.md} and {@code docs/} that sets
 * {@code ductor.console.*} starts Ductor with its console: each {@code ductor.*} key is
 * one Ductor or its console reads (start-up fails on any other), its value binds and
 * passes the console's checks, and every other key is one the configuration metadata of
 * the class path names.
 */
class DocumentedConsoleConfigurationTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	private final WebApplicationContextRunner runner = new WebApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class,
				DataSourceTransactionManagerAutoConfiguration.class, TransactionAutoConfiguration.class,
				JacksonAutoConfiguration.class, DuctorAutoConfiguration.class, DuctorEffectsAutoConfiguration.class,
				EndpointAutoConfiguration.class, WebEndpointAutoConfiguration.class,
				DuctorEndpointAutoConfiguration.class, DuctorConsoleAutoConfiguration.class))
		.withPropertyValues(postgres.springProperties())
		.withPropertyValues("spring.datasource.hikari.maximum-pool-size=2", "ductor.effects.drainer.enabled=false",
				"ductor.effects.reconciler.enabled=false", "ductor.effects.alarm-scheduler.enabled=false",
				"ductor.retention.enabled=false");

	static List<Block> blocks() {
		return DocumentedConfiguration.blocks(DocSnippets.root())
			.stream()
			.filter(DocumentedConfiguration::setsConsoleProperties)
			.toList();
	}

	@Test
	void theDocumentationHasConsoleConfigurationBlocks() {
		assertThat(blocks()).extracting(Block::document).contains("README.md", "docs/console.md");
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("blocks")
	void theBlockStartsTheConsole(Block block) {
		assertThat(DocumentedConfiguration.unknownKeysOutsideDuctor(block, getClass().getClassLoader()))
			.as("keys of %s that no configuration metadata names", block.location())
			.isEmpty();
		this.runner.withInitializer((context) -> DocumentedConfiguration.addTo(block, context.getEnvironment()))
			.run((context) -> assertThat(context).hasNotFailed().hasSingleBean(DuctorConsoleProperties.class));
	}

	@Test
	void aConsoleKeyTheConsoleDoesNotReadFailsTheBlock() {
		Block misspelled = new Block("docs/example.md", 3, "yaml", """
				ductor:
				  console:
				    enabled: true
				    hiden-fields: cardNumber
				""");
		this.runner.withInitializer((context) -> DocumentedConfiguration.addTo(misspelled, context.getEnvironment()))
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.hasStackTraceContaining("ductor.console.hiden-fields"));
	}

}
