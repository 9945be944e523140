package io.ductor.console;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.actuate.autoconfigure.endpoint.EndpointAutoConfiguration;
import org.springframework.boot.actuate.autoconfigure.endpoint.web.WebEndpointAutoConfiguration;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.convert.ApplicationConversionService;
import org.springframework.boot.test.context.assertj.AssertableWebApplicationContext;
import org.springframework.boot.test.context.runner.ContextConsumer;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.core.convert.support.ConfigurableConversionService;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * With the console on, start-up warns, naming the property to set, when the
 * {@code ductor} endpoint it reads and writes through is not exposed over HTTP, is turned
 * off, is read-only, or is served on another port; and it says nothing when the endpoint
 * is there. A stand-in endpoint with the {@code ductor} id takes the place of Ductor's
 * own, whose exposure is what is under test.
 */
@ExtendWith(OutputCaptureExtension.class)
class ConsoleEndpointWarningTest {

	private final WebApplicationContextRunner runner = new WebApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(EndpointAutoConfiguration.class, WebEndpointAutoConfiguration.class,
				DuctorConsoleAutoConfiguration.class))
		.withBean(StandInEndpoint.class)
		// as SpringApplication does: relaxed enum values (read-only)
		.withInitializer((context) -> context.getEnvironment()
			.setConversionService((ConfigurableConversionService) ApplicationConversionService.getSharedInstance()))
		.withPropertyValues("ductor.console.enabled=true");

	@Test
	void anEndpointLeftOutOfTheWebExposureIsNamedWithThePropertyThatExposesIt(CapturedOutput output) {
		this.runner.run(blocking("add ductor to management.endpoints.web.exposure.include "
				+ "(management.endpoints.web.exposure.include=health,ductor)"));
		assertThat(output).contains("WARN")
			.contains("Ductor's operator console (ductor.console.enabled=true, at /ductor) shows nothing: "
					+ "the ductor actuator endpoint is not exposed over HTTP; add ductor to "
					+ "management.endpoints.web.exposure.include (management.endpoints.web.exposure.include=health,ductor).");
	}

	@Test
	void theSuggestionKeepsWhatTheApplicationAlreadyExposes() {
		this.runner.withPropertyValues("management.endpoints.web.exposure.include=health,info,metrics")
			.run(blocking("(management.endpoints.web.exposure.include=health,info,metrics,ductor)"));
	}

	@Test
	void anExcludedEndpointNamesTheExclusion() {
		this.runner
			.withPropertyValues("management.endpoints.web.exposure.include=*",
					"management.endpoints.web.exposure.exclude=env,ductor")
			.run(blocking("kept off HTTP by management.endpoints.web.exposure.exclude=env,ductor; remove ductor "
					+ "from it (management.endpoints.web.exposure.exclude=env)"));
	}

	@Test
	void anEndpointTurnedOffNamesTheAccessProperty() {
		this.runner
			.withPropertyValues("management.endpoints.web.exposure.include=ductor",
					"management.endpoint.ductor.access=none")
			.run(blocking("turned off by management.endpoint.ductor.access=none; set "
					+ "management.endpoint.ductor.access=unrestricted"));
		this.runner
			.withPropertyValues("management.endpoints.web.exposure.include=ductor",
					"management.endpoints.access.default=none")
			.run(blocking("off by default (management.endpoints.access.default=none); set "
					+ "management.endpoint.ductor.access=unrestricted"));
	}

	@Test
	void aReadOnlyEndpointIsANoticeNamingTheAccessProperty(CapturedOutput output) {
		this.runner
			.withPropertyValues("management.endpoints.web.exposure.include=ductor",
					"management.endpoint.ductor.access=read-only")
			.run(notice("can read but not decide: the ductor actuator endpoint is read-only "
					+ "(management.endpoint.ductor.access=read-only); set management.endpoint.ductor.access=unrestricted"));
		assertThat(output).contains("WARN").contains("management.endpoint.ductor.access=unrestricted");
		this.runner
			.withPropertyValues("management.endpoints.web.exposure.include=ductor",
					"management.endpoints.access.max-permitted=read-only")
			.run(notice("capped at read-only by management.endpoints.access.max-permitted; set "
					+ "management.endpoints.access.max-permitted=unrestricted"));
	}

	@Test
	void anEndpointOnTheManagementPortIsANoticeNamingThePort() {
		this.runner
			.withPropertyValues("management.endpoints.web.exposure.include=ductor", "management.server.port=9091")
			.run(notice("served on the management port (management.server.port=9091): remove "
					+ "management.server.port, or let a proxy answer /actuator/ductor on the application's port"));
	}

	@Test
	void anExposedEndpointIsNoNews(CapturedOutput output) {
		this.runner.withPropertyValues("management.endpoints.web.exposure.include=health,ductor")
			.run((context) -> assertThat(context.getBean(ConsoleEndpointCheck.class).finding()).isNull());
		this.runner.withPropertyValues("management.endpoints.web.exposure.include=*")
			.run((context) -> assertThat(context.getBean(ConsoleEndpointCheck.class).finding()).isNull());
		assertThat(output).doesNotContain("operator console");
	}

	@Test
	void withTheConsoleOffNothingIsChecked(CapturedOutput output) {
		this.runner.withPropertyValues("ductor.console.enabled=false")
			.run((context) -> assertThat(context).doesNotHaveBean(ConsoleEndpointCheck.class));
		assertThat(output).doesNotContain("operator console");
	}

	private static ContextConsumer<AssertableWebApplicationContext> blocking(String message) {
		return (context) -> {
			assertThat(context).hasNotFailed();
			EndpointReach.Finding finding = context.getBean(ConsoleEndpointCheck.class).finding();
			assertThat(finding).isNotNull();
			assertThat(finding.blocking()).isTrue();
			assertThat(finding.message()).contains(message);
		};
	}

	private static ContextConsumer<AssertableWebApplicationContext> notice(String message) {
		return (context) -> {
			assertThat(context).hasNotFailed();
			EndpointReach.Finding finding = context.getBean(ConsoleEndpointCheck.class).finding();
			assertThat(finding).isNotNull();
			assertThat(finding.blocking()).isFalse();
			assertThat(finding.message()).contains(message);
		};
	}

	/** An endpoint with Ductor's id, with a read and a write as Ductor's has. */
	@Endpoint(id = "ductor")
	static class StandInEndpoint {

		@ReadOperation
		public String overview() {
			return "overview";
		}

		@WriteOperation
		public String act(@Selector long id, String action) {
			return action;
		}

	}

}
