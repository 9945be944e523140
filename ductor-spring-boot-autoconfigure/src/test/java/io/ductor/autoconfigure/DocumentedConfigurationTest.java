package io.ductor.autoconfigure;

import java.util.List;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import io.ductor.actuate.autoconfigure.DuctorEndpointAutoConfiguration;
import io.ductor.effect.DurableEffect;
import io.ductor.effect.autoconfigure.DuctorEffectsAutoConfiguration;
import io.ductor.effect.autoconfigure.DuctorEffectsProperties;
import io.ductor.health.autoconfigure.DuctorHealthAutoConfiguration;
import io.ductor.health.autoconfigure.DuctorHealthProperties;
import io.ductor.idempotency.autoconfigure.DuctorIdempotencyAutoConfiguration;
import io.ductor.idempotency.autoconfigure.DuctorIdempotencyProperties;
import io.ductor.metrics.autoconfigure.DuctorMetricsAutoConfiguration;
import io.ductor.metrics.autoconfigure.DuctorMetricsProperties;
import io.ductor.observation.autoconfigure.DuctorObservationAutoConfiguration;
import io.ductor.observation.autoconfigure.DuctorTracingAutoConfiguration;
import io.ductor.test.PostgresExtension;
import io.ductor.test.docs.DocSnippets;
import io.ductor.test.docs.DocSnippets.Block;
import io.ductor.test.docs.DocumentedConfiguration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every YAML and properties block of {@code README.md} and {@code docs/} (but those of
 * the console, which {@code DocumentedConsoleConfigurationTest} binds) starts Ductor:
 * each {@code ductor.*} key is one Ductor reads (start-up fails on any other), its value
 * binds and passes Ductor's checks, the effects its alarms and overrides name exist in an
 * application that has the effects the pages describe, and every other key is one the
 * configuration metadata of the class path names.
 */
class DocumentedConfigurationTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	private final ApplicationContextRunner runner = DuctorContextRunners
		.onDatabase(postgres, DuctorAutoConfiguration.class, DuctorEffectsAutoConfiguration.class,
				DuctorIdempotencyAutoConfiguration.class, DuctorObservationAutoConfiguration.class,
				DuctorTracingAutoConfiguration.class, DuctorMetricsAutoConfiguration.class,
				DuctorHealthAutoConfiguration.class, DuctorEndpointAutoConfiguration.class)
		.withPropertyValues("ductor.effects.drainer.enabled=false", "ductor.effects.reconciler.enabled=false",
				"ductor.effects.alarm-scheduler.enabled=false", "ductor.retention.enabled=false",
				"ductor.idempotency.sweeper.enabled=false")
		.withBean(MeterRegistry.class, SimpleMeterRegistry::new)
		.withBean(DocumentedEffects.class);

	static List<Block> blocks() {
		return DocumentedConfiguration.blocks(DocSnippets.root())
			.stream()
			.filter((block) -> !DocumentedConfiguration.setsConsoleProperties(block))
			.toList();
	}

	@Test
	void theDocumentationHasConfigurationBlocks() {
		assertThat(blocks()).hasSizeGreaterThanOrEqualTo(8);
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("blocks")
	void theBlockStartsDuctor(Block block) {
		assertThat(DocumentedConfiguration.unknownKeysOutsideDuctor(block, getClass().getClassLoader()))
			.as("keys of %s that no configuration metadata names", block.location())
			.isEmpty();
		this.runner.withInitializer((context) -> DocumentedConfiguration.addTo(block, context.getEnvironment()))
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(context).hasSingleBean(DuctorProperties.class)
					.hasSingleBean(DuctorEffectsProperties.class)
					.hasSingleBean(DuctorIdempotencyProperties.class)
					.hasSingleBean(DuctorMetricsProperties.class)
					.hasSingleBean(DuctorHealthProperties.class);
			});
	}

	@Test
	void aKeyDuctorDoesNotReadFailsTheBlock() {
		Block misspelled = new Block("docs/example.md", 3, "yaml", """
				ductor:
				  effects:
				    alarms:
				      nightly-settlement:
				        cron: "0 0 2 * * *"
				        effect: Settlement.run
				        arguments: [ "EUR", "3" ]
				        mised: skip
				""");
		this.runner.withInitializer((context) -> DocumentedConfiguration.addTo(misspelled, context.getEnvironment()))
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.hasStackTraceContaining("ductor.effects.alarms.nightly-settlement.mised"));
	}

	@Test
	void aKeyNoMetadataNamesFailsTheBlock() {
		Block misspelled = new Block("docs/example.md", 3, "yaml", """
				management.endpoints.web.exposure.include: health,ductor
				management.endpoint.health.group.readiness.include: readinessState,db,ductor
				management.endpoints.web.exposure.inclde: ductor
				""");
		assertThat(DocumentedConfiguration.unknownKeysOutsideDuctor(misspelled, getClass().getClassLoader()))
			.containsExactly("management.endpoints.web.exposure.inclde");
	}

	/** The effects that the pages' alarms and overrides name. */
	static class DocumentedEffects {

		@DurableEffect(name = "Settlement.run")
		public void settle(String currency, int days) {
		}

		@DurableEffect(name = "Monitor.ping")
		public void ping() {
		}

		@DurableEffect(name = "billing.charge")
		public void charge(String account) {
		}

	}

}
