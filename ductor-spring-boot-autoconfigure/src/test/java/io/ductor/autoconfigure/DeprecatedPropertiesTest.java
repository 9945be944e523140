package io.ductor.autoconfigure;

import java.io.InputStream;
import java.time.Duration;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.env.SystemEnvironmentPropertySource;

import io.ductor.effect.autoconfigure.DuctorEffectsProperties;
import io.ductor.idempotency.autoconfigure.DuctorIdempotencyProperties;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The keys that moved under their feature keep working for this version: an old key is
 * honoured with a warning naming the new key, a new key wins over its old one, and the
 * configuration metadata marks each old key deprecated with its replacement.
 */
@ExtendWith(OutputCaptureExtension.class)
class DeprecatedPropertiesTest {

	@Test
	void anOldKeyIsHonouredAndTheWarningNamesTheNewKey(CapturedOutput output) {
		try (ConfigurableApplicationContext context = run(new StandardEnvironment(), "ductor.drainer.batch-size=7",
				"ductor.reconciler.interval=9s", "ductor.alarm-scheduler.batch-size=3",
				"ductor.alarms.nightly.effect=Mailer.send", "ductor.alarms.nightly.every=1h",
				"ductor.sweeper.interval=11s")) {
			DuctorEffectsProperties effects = context.getBean(DuctorEffectsProperties.class);
			assertThat(effects.drainer().batchSize()).isEqualTo(7);
			assertThat(effects.reconciler().interval()).isEqualTo(Duration.ofSeconds(9));
			assertThat(effects.alarmScheduler().batchSize()).isEqualTo(3);
			assertThat(effects.alarms()).containsOnlyKeys("nightly");
			assertThat(effects.alarms().get("nightly").every()).isEqualTo(Duration.ofHours(1));
			assertThat(context.getBean(DuctorIdempotencyProperties.class).sweeper().interval())
				.isEqualTo(Duration.ofSeconds(11));
			assertThat(context.getEnvironment().getProperty("ductor.effects.drainer.batch-size")).isEqualTo("7");
		}
		assertThat(output)
			.containsOnlyOnce(
					"'ductor.drainer.batch-size' is deprecated: use" + " 'ductor.effects.drainer.batch-size' instead")
			.contains("'ductor.sweeper.interval' is deprecated: use 'ductor.idempotency.sweeper.interval' instead")
			.contains("'ductor.alarms.nightly.every' is deprecated: use 'ductor.effects.alarms.nightly.every' instead");
	}

	@Test
	void anOldAlarmKeyKeepsTheCaseOfItsAlarmName() {
		try (ConfigurableApplicationContext context = run(new StandardEnvironment(),
				"ductor.alarms.NightlyReport.effect=Mailer.send", "ductor.alarms.NightlyReport.every=1h",
				"ductor.alarms.NightlyReport.arguments[0]=first", "ductor.alarms.NightlyReport.arguments[1]=second",
				"ductor.effects.alarms.MorningReport.effect=Mailer.send",
				"ductor.effects.alarms.MorningReport.every=2h")) {
			Map<String, DuctorEffectsProperties.Alarm> alarms = context.getBean(DuctorEffectsProperties.class).alarms();
			assertThat(alarms).containsOnlyKeys("NightlyReport", "MorningReport");
			assertThat(alarms.get("NightlyReport").every()).isEqualTo(Duration.ofHours(1));
			assertThat(alarms.get("NightlyReport").arguments()).containsExactly("first", "second");
		}
	}

	@Test
	void anOldKeyFromAnEnvironmentVariableIsHonouredAndTurnsItsWorkerOff(CapturedOutput output) {
		StandardEnvironment environment = new StandardEnvironment();
		environment.getPropertySources()
			.replace(StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME,
					new SystemEnvironmentPropertySource(StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME,
							Map.of("DUCTOR_DRAINER_ENABLED", "false", "DUCTOR_DRAINER_CONCURRENCY", "3")));
		try (ConfigurableApplicationContext context = run(environment)) {
			DuctorEffectsProperties effects = context.getBean(DuctorEffectsProperties.class);
			assertThat(effects.drainer().enabled()).isFalse();
			assertThat(effects.drainer().concurrency()).isEqualTo(3);
			// what @ConditionalOnBooleanProperty reads
			assertThat(context.getEnvironment().getProperty("ductor.effects.drainer.enabled")).isEqualTo("false");
		}
		assertThat(output).contains("'ductor.drainer.enabled' is deprecated: use 'ductor.effects.drainer.enabled'");
	}

	@Test
	void aNewKeyWinsOverItsOldOneWhenBothAreSet(CapturedOutput output) {
		try (ConfigurableApplicationContext context = run(new StandardEnvironment(), "ductor.drainer.batch-size=7",
				"ductor.effects.drainer.batch-size=42", "ductor.sweeper.interval=11s")) {
			assertThat(context.getBean(DuctorEffectsProperties.class).drainer().batchSize()).isEqualTo(42);
			assertThat(context.getBean(DuctorIdempotencyProperties.class).sweeper().interval())
				.isEqualTo(Duration.ofSeconds(11));
		}
		assertThat(output).contains("ignores the deprecated property 'ductor.drainer.batch-size':"
				+ " 'ductor.effects.drainer.batch-size', which replaces it, is set too");
	}

	@Test
	void theMetadataMarksEachOldKeyDeprecatedWithItsReplacement() throws Exception {
		JsonNode metadata;
		try (InputStream json = getClass().getResourceAsStream("/META-INF/spring-configuration-metadata.json")) {
			metadata = JsonMapper.builder().build().readTree(json);
		}
		Map<String, String> replacements = Map.of("ductor.drainer.batch-size", "ductor.effects.drainer.batch-size",
				"ductor.reconciler.interval", "ductor.effects.reconciler.interval", "ductor.alarm-scheduler.enabled",
				"ductor.effects.alarm-scheduler.enabled", "ductor.alarms", "ductor.effects.alarms",
				"ductor.sweeper.interval", "ductor.idempotency.sweeper.interval");
		replacements.forEach((old, replacement) -> {
			JsonNode property = property(metadata, old);
			assertThat(property.path("deprecation").path("replacement").asString()).as(old).isEqualTo(replacement);
			assertThat(property.path("deprecation").path("level").asString()).as(old).isEqualTo("warning");
			assertThat(property(metadata, replacement)).as(replacement).isNotNull();
		});
		// one backoff type, each use with its documented defaults
		assertThat(property(metadata, "ductor.effects.backoff.max").path("defaultValue").asString()).isEqualTo("10m");
		assertThat(property(metadata, "ductor.effects.reconcile.backoff.max").path("defaultValue").asString())
			.isEqualTo("5m");
		assertThat(property(metadata, "ductor.ticks.backoff.initial").path("defaultValue").asString()).isEqualTo("5ms");
		assertThat(property(metadata, "ductor.effects.drainer.batch-size").path("defaultValue").asInt()).isEqualTo(100);
	}

	private static JsonNode property(JsonNode metadata, String name) {
		for (JsonNode property : metadata.path("properties")) {
			if (property.path("name").asString().equals(name)) {
				return property;
			}
		}
		throw new AssertionError("no metadata for " + name);
	}

	private static ConfigurableApplicationContext run(StandardEnvironment environment, String... properties) {
		return new SpringApplicationBuilder(PropertiesOnly.class).web(WebApplicationType.NONE)
			.environment(environment)
			.properties(properties)
			.run();
	}

	@Configuration(proxyBeanMethods = false)
	@EnableConfigurationProperties({ DuctorEffectsProperties.class, DuctorIdempotencyProperties.class })
	static class PropertiesOnly {

	}

}
