package io.ductor.autoconfigure;

import java.lang.reflect.ParameterizedType;
import java.lang.reflect.RecordComponent;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;

import io.ductor.effect.autoconfigure.DuctorConfiguredAlarms;
import io.ductor.effect.autoconfigure.DuctorEffectOverrides;
import io.ductor.effect.autoconfigure.DuctorEffectsProperties;
import io.ductor.health.autoconfigure.DuctorHealthProperties;
import io.ductor.idempotency.autoconfigure.DuctorIdempotencyProperties;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every duration property of Ductor's properties types is bounded at start-up by what
 * PostgreSQL's {@code now() ± interval} and {@link Duration#toNanos()} can hold. The
 * properties are found by walking the records, so a duration added later is checked
 * without touching this test.
 */
class DuctorPropertiesDurationLimitsTest {

	private static final String LARGEST = "36500d";

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withUserConfiguration(PropertiesOnly.class);

	static List<String> durationProperties() {
		List<String> properties = new ArrayList<>();
		collect("ductor", DuctorProperties.class, properties);
		collect("ductor.effects", DuctorEffectsProperties.class, properties);
		collect("ductor.effects.overrides.send", DuctorEffectOverrides.EffectOverride.class, properties);
		collect("ductor.effects.alarms.send", DuctorConfiguredAlarms.Alarm.class, properties);
		collect("ductor.idempotency", DuctorIdempotencyProperties.class, properties);
		collect("ductor.health", DuctorHealthProperties.class, properties);
		return properties;
	}

	@Test
	void theWalkFindsEveryKnownDurationProperty() {
		assertThat(durationProperties()).contains("ductor.ticks.backoff.initial", "ductor.ticks.backoff.max",
				"ductor.retention.interval", "ductor.effects.retention", "ductor.effects.backoff.initial",
				"ductor.effects.backoff.max", "ductor.effects.overrides.send.backoff.initial",
				"ductor.effects.overrides.send.backoff.max", "ductor.effects.drainer.poll-interval",
				"ductor.effects.drainer.lease", "ductor.shutdown-timeout", "ductor.idempotency.pending-ttl",
				"ductor.idempotency.completed-ttl", "ductor.idempotency.retention", "ductor.idempotency.wait-timeout",
				"ductor.idempotency.poll-interval", "ductor.effects.reconciler.interval",
				"ductor.idempotency.sweeper.interval", "ductor.health.max-oldest-age", "ductor.backlog.cache-ttl");
	}

	@Test
	void everyDurationAtTheLargestAcceptedValueStartsUp() {
		String[] all = durationProperties().stream().map((property) -> property + "=" + LARGEST).toArray(String[]::new);
		this.runner.withPropertyValues(all)
			.withPropertyValues("ductor.effects.alarms.send.effect=send")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				DuctorEffectsProperties effects = context.getBean(DuctorEffectsProperties.class);
				assertThat(effects.retention()).isEqualTo(DuctorProperties.MAX_DURATION);
				assertThat(context.getBean(DuctorIdempotencyProperties.class).pendingTtl())
					.isEqualTo(Duration.ofDays(36_500));
				assertThat(context.getBean(DuctorEffectOverrides.class).find("send").backoff().max())
					.isEqualTo(Duration.ofDays(36_500));
			});
	}

	@ParameterizedTest
	@MethodSource("durationProperties")
	void aDurationOneDayPastTheLargestFailsStartUpNamingThePropertyTheValueAndTheLimit(String property) {
		this.runner.withPropertyValues(property + "=36501d").withPropertyValues(companions(property)).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(DuctorAutoConfigurationTest.messages(context))
				.contains(property + " must be at most 36500d (100 years)")
				.contains("but was 36501d");
		});
	}

	@ParameterizedTest
	@MethodSource("durationProperties")
	void aDurationOneNanosecondPastTheLargestFailsStartUp(String property) {
		this.runner.withPropertyValues(property + "=PT876000H0.000000001S")
			.withPropertyValues(companions(property))
			.run((context) -> {
				assertThat(context).hasFailed();
				assertThat(DuctorAutoConfigurationTest.messages(context))
					.contains(property + " must be at most 36500d (100 years)")
					.contains("but was PT876000H0.000000001S");
			});
	}

	@Test
	void keepingEffectsForEverWithAHugeRetentionFailsStartUpAndSaysHowToKeepThem() {
		this.runner.withPropertyValues("ductor.effects.retention=3650000d").run((context) -> {
			assertThat(context).hasFailed();
			assertThat(DuctorAutoConfigurationTest.messages(context))
				.contains("ductor.effects.retention must be at most 36500d (100 years), the longest duration Ductor"
						+ " accepts, but was 3650000d; to keep rows for ever, set ductor.retention.enabled=false"
						+ " instead");
		});
	}

	@Test
	void anIdempotencyTtlBeyondWhatNanosecondsHoldFailsStartUp() {
		// Duration.toNanos() overflows past 106751 days; the limit is well inside it
		this.runner
			.withPropertyValues("ductor.idempotency.completed-ttl=106752d", "ductor.idempotency.retention=106752d")
			.run((context) -> {
				assertThat(context).hasFailed();
				assertThat(DuctorAutoConfigurationTest.messages(context))
					.contains("ductor.idempotency.completed-ttl must be at most 36500d (100 years)")
					.contains("but was 106752d");
			});
	}

	/**
	 * What a property needs beside it to be checked at all: a recurring alarm is one
	 * declaration, whose duration limits are checked once it names its effect and has one
	 * schedule.
	 */
	private static String[] companions(String property) {
		if (property.equals("ductor.effects.alarms.send.every")) {
			return new String[] { "ductor.effects.alarms.send.effect=send" };
		}
		if (property.startsWith("ductor.effects.alarms.send.")) {
			return new String[] { "ductor.effects.alarms.send.effect=send", "ductor.effects.alarms.send.every=1s" };
		}
		return new String[0];
	}

	private static void collect(String prefix, Class<?> type, List<String> properties) {
		for (RecordComponent component : type.getRecordComponents()) {
			String name = prefix + "." + kebab(component.getName());
			Class<?> componentType = component.getType();
			if (componentType == Duration.class) {
				properties.add(name);
			}
			else if (componentType == Map.class) {
				Class<?> valueType = (Class<?>) ((ParameterizedType) component.getGenericType())
					.getActualTypeArguments()[1];
				if (valueType.isRecord()) {
					collect(name + ".send", valueType, properties);
				}
			}
			else if (componentType.isRecord()) {
				collect(name, componentType, properties);
			}
		}
	}

	private static String kebab(String camel) {
		StringBuilder kebab = new StringBuilder();
		camel.chars().forEach((c) -> {
			if (Character.isUpperCase(c)) {
				kebab.append('-').append(Character.toLowerCase((char) c));
			}
			else {
				kebab.append((char) c);
			}
		});
		return kebab.toString().toLowerCase(Locale.ROOT);
	}

	@Configuration(proxyBeanMethods = false)
	@EnableConfigurationProperties({ DuctorProperties.class, DuctorEffectsProperties.class,
			DuctorIdempotencyProperties.class, DuctorHealthProperties.class })
	static class PropertiesOnly {

		@Bean
		DuctorEffectOverrides overrides(Environment environment, DuctorEffectsProperties effects) {
			return DuctorEffectOverrides.bind(environment, effects.backoff());
		}

		@Bean
		DuctorConfiguredAlarms alarms(Environment environment) {
			return DuctorConfiguredAlarms.bind(environment);
		}

	}

}
