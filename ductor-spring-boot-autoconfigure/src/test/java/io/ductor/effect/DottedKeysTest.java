package io.ductor.effect;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import org.springframework.boot.env.PropertiesPropertySourceLoader;
import org.springframework.boot.env.YamlPropertySourceLoader;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.env.MutablePropertySources;
import org.springframework.core.env.PropertySource;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.env.SystemEnvironmentPropertySource;
import org.springframework.core.io.ByteArrayResource;

import io.ductor.autoconfigure.DuctorAutoConfiguration;
import io.ductor.autoconfigure.DuctorContextRunners;
import io.ductor.effect.autoconfigure.DuctorEffectsAutoConfiguration;
import io.ductor.test.PostgresExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Effect and alarm names hold dots, and every form of configuration Spring Boot reads
 * binds them whole: properties and YAML, dotted and bracketed, and environment variables.
 * The forms {@code docs/reference.md} shows are read from the page itself. Configuration
 * that names nothing fails start-up naming the property, where it was set and the closest
 * name that exists.
 */
class DottedKeysTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	private static final Path REFERENCE = Path.of("../docs/reference.md");

	private final ApplicationContextRunner runner = DuctorContextRunners
		.onDatabase(postgres, DuctorAutoConfiguration.class, DuctorEffectsAutoConfiguration.class)
		.withPropertyValues("ductor.effects.alarm-scheduler.enabled=false", "ductor.effects.drainer.enabled=false")
		.withBean(Billing.class)
		.withBean(OrderService.class);

	static List<Snippet> documentedForms() throws IOException {
		String page = Files.readString(REFERENCE);
		String section = page.substring(page.indexOf("<!-- dotted-keys:begin -->"),
				page.indexOf("<!-- dotted-keys:end -->"));
		List<Snippet> snippets = new ArrayList<>();
		Matcher block = Pattern.compile("```(\\w+)\\n(.*?)```", Pattern.DOTALL).matcher(section);
		while (block.find()) {
			snippets.add(new Snippet(block.group(1), block.group(2)));
		}
		return snippets;
	}

	@Test
	void theReferenceShowsEveryForm() throws IOException {
		assertThat(documentedForms()).extracting(Snippet::language)
			.containsExactly("properties", "properties", "yaml", "yaml", "shell");
	}

	@ParameterizedTest
	@MethodSource("documentedForms")
	void everyDocumentedFormLimitsTheEffectWhoseNameHasADot(Snippet form) {
		this.runner.withInitializer(form::addTo).run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(context.getBean(EffectOperations.class).concurrency())
				.containsExactly(new EffectConcurrency("billing.charge", 1, 0));
		});
	}

	@Test
	void anEnvironmentVariableNamesTheEffectWhateverTheCaseOfItsName() {
		this.runner
			.withInitializer(
					new Snippet("shell", "DUCTOR_EFFECTS_OVERRIDES_ORDERSERVICE_CHARGE_MAXCONCURRENCY=3\n")::addTo)
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(context.getBean(EffectOperations.class).concurrency())
					.containsExactly(new EffectConcurrency("OrderService.charge", 3, 0));
			});
	}

	@Test
	void anEnvironmentVariableWinsOverTheFileWhicheverFormTheFileUses() {
		String bracketed = """
				ductor:
				  effects:
				    overrides:
				      "[billing.charge]":
				        max-concurrency: 1
				""";
		String nested = """
				ductor:
				  effects:
				    overrides:
				      OrderService:
				        charge:
				          max-concurrency: 1
				""";
		this.runner.withInitializer(new Snippet("yaml", bracketed)::addTo)
			.withInitializer(new Snippet("yaml", nested)::addTo)
			.withInitializer(new Snippet("shell", """
					DUCTOR_EFFECTS_OVERRIDES_BILLING_CHARGE_MAXCONCURRENCY=2
					DUCTOR_EFFECTS_OVERRIDES_ORDERSERVICE_CHARGE_MAXCONCURRENCY=4
					""")::addTo)
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(context.getBean(EffectOperations.class).concurrency()).containsExactlyInAnyOrder(
						new EffectConcurrency("OrderService.charge", 4, 0),
						new EffectConcurrency("billing.charge", 2, 0));
			});
	}

	@ParameterizedTest
	@MethodSource("alarmForms")
	void everyFormDeclaresTheAlarmWhoseNameHasADot(Snippet form) {
		this.runner.withInitializer(form::addTo).run((context) -> {
			assertThat(context).hasNotFailed();
			List<RecurringAlarm> alarms = context.getBean(RecurringAlarms.class).recurringAlarms();
			assertThat(alarms).extracting(RecurringAlarm::name).containsExactly("billing.nightly");
			assertThat(alarms.get(0).effectName()).isEqualTo("billing.charge");
		});
	}

	static List<Snippet> alarmForms() {
		return List.of(new Snippet("properties", """
				ductor.effects.alarms.billing.nightly.every=1h
				ductor.effects.alarms.billing.nightly.effect=billing.charge
				ductor.effects.alarms.billing.nightly.arguments[0]=all
				"""), new Snippet("properties", """
				ductor.effects.alarms[billing.nightly].every=1h
				ductor.effects.alarms[billing.nightly].effect=billing.charge
				ductor.effects.alarms[billing.nightly].arguments=all
				"""), new Snippet("yaml", """
				ductor:
				  effects:
				    alarms:
				      billing:
				        nightly:
				          every: 1h
				          effect: billing.charge
				          arguments: [ all ]
				"""), new Snippet("yaml", """
				ductor:
				  effects:
				    alarms:
				      "[billing.nightly]":
				        every: 1h
				        effect: billing.charge
				        arguments: [ all ]
				"""), new Snippet("shell", """
				DUCTOR_EFFECTS_ALARMS_BILLING_NIGHTLY_EVERY=1h
				DUCTOR_EFFECTS_ALARMS_BILLING_NIGHTLY_EFFECT=billing.charge
				DUCTOR_EFFECTS_ALARMS_BILLING_NIGHTLY_ARGUMENTS_0_=all
				"""));
	}

	@Test
	void anOverrideOfNoEffectFailsNamingThePropertyWhereItIsSetAndTheClosestEffect() {
		assertFails(new Snippet("properties", "ductor.effects.overrides.billing.charg.max-concurrency=1\n"),
				"ductor.effects.overrides.billing.charg.max-concurrency names an effect that does not exist",
				"docs/reference.md", "did you mean 'billing.charge'?");
	}

	@Test
	void anOverrideOfNoEffectInTheEnvironmentFailsNamingTheVariable() {
		assertFails(new Snippet("shell", "DUCTOR_EFFECTS_OVERRIDES_BILLING_CHARG_MAXATTEMPTS=3\n"),
				"names an effect that does not exist", "DUCTOR_EFFECTS_OVERRIDES_BILLING_CHARG_MAXATTEMPTS",
				"did you mean 'billing.charge'?");
	}

	@Test
	void aKeyNoOverrideHasFailsNamingTheClosestProperty() {
		assertFails(new Snippet("yaml", """
				ductor:
				  effects:
				    overrides:
				      billing:
				        charge:
				          max-concurency: 1
				"""), "ductor.effects.overrides.billing.charge.max-concurency", "docs/reference.md",
				"did you mean 'max-concurrency'?");
	}

	@Test
	void aKeyNoAlarmHasFailsNamingTheClosestProperty() {
		assertFails(new Snippet("properties", """
				ductor.effects.alarms.billing.nightly.every=1h
				ductor.effects.alarms.billing.nightly.efect=billing.charge
				"""), "ductor.effects.alarms.billing.nightly.efect", "did you mean 'effect'?");
	}

	@Test
	void anAlarmOfNoEffectFailsNamingTheClosestEffect() {
		assertFails(new Snippet("properties", """
				ductor.effects.alarms.billing.nightly.every=1h
				ductor.effects.alarms.billing.nightly.effect=billing.charg
				ductor.effects.alarms.billing.nightly.arguments=all
				"""), "ductor.effects.alarms.billing.nightly.effect names an effect that does not exist",
				"did you mean 'billing.charge'?");
	}

	@Test
	void aKeyUnderDuctorThatDuctorDoesNotReadFailsNamingTheClosestProperty() {
		assertFails(new Snippet("yaml", """
				ductor:
				  effects:
				    drainer:
				      batch-sise: 5
				"""), "ductor.effects.drainer.batch-sise", "is not a property of Ductor", "docs/reference.md",
				"did you mean 'ductor.effects.drainer.batch-size'?");
	}

	@Test
	void keysUnderDuctorInTheEnvironmentThatOtherToolsUseAreLeftAlone() {
		this.runner
			.withInitializer(new Snippet("shell", "DUCTOR_TEST_JDBC_URL=jdbc:postgresql://elsewhere/test\n")::addTo)
			.run((context) -> assertThat(context).hasNotFailed());
	}

	private void assertFails(Snippet snippet, String... expected) {
		this.runner.withInitializer(snippet::addTo).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(messages(context)).contains(expected);
		});
	}

	private static String messages(AssertableApplicationContext context) {
		StringBuilder messages = new StringBuilder();
		for (Throwable ex = context.getStartupFailure(); ex != null; ex = ex.getCause()) {
			messages.append(ex.getMessage()).append('\n');
		}
		return messages.toString();
	}

	/**
	 * A piece of configuration as a user writes it: a properties file, a YAML file, or
	 * environment variables ({@code NAME=value} lines).
	 */
	record Snippet(String language, String text) {

		/**
		 * Adds the snippet where Spring Boot reads it: files below the environment
		 * variables, which replace the process's own.
		 */
		void addTo(ConfigurableApplicationContext context) {
			MutablePropertySources sources = context.getEnvironment().getPropertySources();
			ByteArrayResource resource = new ByteArrayResource(this.text.getBytes(StandardCharsets.UTF_8),
					"docs/reference.md");
			try {
				switch (this.language) {
					case "properties" ->
						new PropertiesPropertySourceLoader().load("snippet-" + sources.size(), resource)
							.forEach(sources::addLast);
					case "yaml" -> new YamlPropertySourceLoader().load("snippet-" + sources.size(), resource)
						.forEach(sources::addLast);
					case "shell" -> sources.replace(StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME,
							environment(sources));
					default -> throw new IllegalArgumentException("No snippet language " + this.language);
				}
			}
			catch (IOException ex) {
				throw new IllegalStateException(ex);
			}
		}

		/**
		 * Environment variables of higher precedence than every file, as in Spring Boot.
		 */
		private PropertySource<?> environment(MutablePropertySources sources) {
			Map<String, Object> variables = new LinkedHashMap<>();
			PropertySource<?> current = sources.get(StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME);
			if (current instanceof SystemEnvironmentPropertySource existing) {
				for (String name : existing.getPropertyNames()) {
					if (!name.startsWith("DUCTOR_")) {
						variables.put(name, existing.getProperty(name));
					}
				}
			}
			for (String line : this.text.strip().split("\n")) {
				variables.put(line.substring(0, line.indexOf('=')), line.substring(line.indexOf('=') + 1));
			}
			return new SystemEnvironmentPropertySource(StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME,
					variables);
		}

		@Override
		public String toString() {
			return this.language + ": " + this.text.strip().replace('\n', ' ');
		}

	}

	public static class Billing {

		@DurableEffect(name = "billing.charge")
		public void charge(String account) {
		}

	}

	public static class OrderService {

		@DurableEffect
		public void charge(String orderId) {
		}

	}

}
