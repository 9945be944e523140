package io.ductor.observation.autoconfigure;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration;
import org.springframework.boot.micrometer.tracing.autoconfigure.MicrometerTracingAutoConfiguration;
import org.springframework.boot.micrometer.tracing.opentelemetry.autoconfigure.OpenTelemetryTracingAutoConfiguration;
import org.springframework.boot.opentelemetry.autoconfigure.OpenTelemetrySdkAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import io.ductor.autoconfigure.DuctorAutoConfiguration;
import io.ductor.autoconfigure.DuctorContextRunners;
import io.ductor.effect.autoconfigure.DuctorEffectsAutoConfiguration;
import io.ductor.test.PostgresExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * With an observation registry and a Micrometer Tracing bridge on the class path but no
 * tracer (on Spring Boot 4 the bridge needs Boot's tracing module for it), Ductor warns
 * at start-up, naming the module to add: effects would otherwise store no trace context,
 * silently.
 */
@ExtendWith(OutputCaptureExtension.class)
class TracingSetupWarningTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	private static final String WARNING = "Micrometer Tracing is on the class path but the application has no Tracer"
			+ " bean";

	private final ApplicationContextRunner runner = DuctorContextRunners
		.onDatabase(postgres, DuctorAutoConfiguration.class, DuctorEffectsAutoConfiguration.class,
				DuctorObservationAutoConfiguration.class, DuctorTracingAutoConfiguration.class,
				ObservationAutoConfiguration.class)
		.withPropertyValues("ductor.effects.drainer.enabled=false");

	@Test
	void aBridgeWithoutBootsTracingModuleIsWarnedAboutNamingTheModuleToAdd(CapturedOutput output) {
		this.runner.run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(output).contains(WARNING)
				.contains("org.springframework.boot:spring-boot-starter-opentelemetry")
				.contains("docs/tracing.md");
		});
	}

	@Test
	void withBootsTracingModuleThereIsATracerAndNoWarning(CapturedOutput output) {
		this.runner
			.withConfiguration(AutoConfigurations.of(OpenTelemetrySdkAutoConfiguration.class,
					MicrometerTracingAutoConfiguration.class, OpenTelemetryTracingAutoConfiguration.class))
			.run((context) -> {
				assertThat(context).hasNotFailed().hasSingleBean(io.micrometer.tracing.Tracer.class);
				assertThat(output).doesNotContain(WARNING);
			});
	}

	@Test
	void withoutMicrometerTracingNoTracingWasMeantAndNothingIsSaid(CapturedOutput output) {
		this.runner.withClassLoader(new FilteredClassLoader("io.micrometer.tracing"))
			.run((context) -> assertThat(output).doesNotContain(WARNING));
	}

	@Test
	void tracingSwitchedOffIsNotWarnedAbout(CapturedOutput output) {
		this.runner.withPropertyValues("management.tracing.enabled=false")
			.run((context) -> assertThat(output).doesNotContain(WARNING));
	}

}
