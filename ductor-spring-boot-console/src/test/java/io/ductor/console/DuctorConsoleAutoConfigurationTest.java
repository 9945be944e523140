package io.ductor.console;

import java.util.List;

import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.support.StaticListableBeanFactory;
import org.springframework.boot.actuate.autoconfigure.endpoint.EndpointAutoConfiguration;
import org.springframework.boot.actuate.autoconfigure.endpoint.web.WebEndpointAutoConfiguration;
import org.springframework.boot.actuate.endpoint.web.PathMappedEndpoints;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.mock.env.MockEnvironment;
import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.security.web.SecurityFilterChain;
import org.springframework.web.servlet.function.EntityResponse;
import org.springframework.web.servlet.function.RouterFunction;
import org.springframework.web.servlet.function.RouterFunctions;
import org.springframework.web.servlet.function.ServerRequest;
import org.springframework.web.servlet.function.ServerResponse;

import io.ductor.actuate.OperatorAccess;
import io.ductor.actuate.internal.PayloadMask;
import io.ductor.console.internal.RoleOperatorAccess;

import static org.assertj.core.api.Assertions.assertThat;
import static org.mockito.Mockito.mock;

class DuctorConsoleAutoConfigurationTest {

	private final WebApplicationContextRunner runner = new WebApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(EndpointAutoConfiguration.class, WebEndpointAutoConfiguration.class,
				DuctorConsoleAutoConfiguration.class));

	@Test
	void theConsoleIsOffUnlessEnabled() {
		this.runner.run((context) -> assertThat(context).doesNotHaveBean(RouterFunction.class)
			.doesNotHaveBean(DuctorConsoleProperties.class));
	}

	@Test
	void enabledItServesItsPageAndShowsArgumentsAsStoredWithoutHiddenFields() {
		this.runner.withPropertyValues("ductor.console.enabled=true").run((context) -> {
			assertThat(context).hasSingleBean(RouterFunction.class);
			assertThat(context.getBean(PayloadMask.class)).isSameAs(PayloadMask.NONE);
			assertThat(context.getBean(DuctorConsoleProperties.class).path()).isEqualTo("/ductor");
			assertThat(context).doesNotHaveBean(OperatorAccess.class);
		});
	}

	@Test
	void theApplicationsEndpointCheckIsWhatThePageShows() {
		this.runner.withPropertyValues("ductor.console.enabled=true")
			.withBean(ConsoleEndpointCheck.class, UserEndpointCheck::new)
			.run((context) -> {
				assertThat(context).hasSingleBean(ConsoleEndpointCheck.class);
				@SuppressWarnings("unchecked")
				RouterFunction<ServerResponse> routes = context.getBean(RouterFunction.class);
				ServerRequest request = ServerRequest.create(new MockHttpServletRequest("GET", "/ductor"), List.of());
				ServerResponse page = routes.route(request).orElseThrow().handle(request);
				assertThat((String) ((EntityResponse<?>) page).entity()).contains("the application's own finding");
			});
	}

	@Test
	void theApplicationsConsoleRoutesReplaceDuctorsAndSitBesideItsOtherRoutes() {
		RouterFunction<ServerResponse> own = RouterFunctions.route()
			.GET("/ductor", (request) -> ServerResponse.ok().body("the application's console"))
			.build();
		RouterFunction<ServerResponse> other = RouterFunctions.route()
			.GET("/other", (request) -> ServerResponse.ok().build())
			.build();
		this.runner.withPropertyValues("ductor.console.enabled=true")
			.withBean("ductorConsoleRoutes", RouterFunction.class, () -> own)
			.withBean("otherRoutes", RouterFunction.class, () -> other)
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(context.getBeansOfType(RouterFunction.class)).containsOnlyKeys("ductorConsoleRoutes",
						"otherRoutes");
				assertThat(context.getBean("ductorConsoleRoutes")).isSameAs(own);
			});
		this.runner.withPropertyValues("ductor.console.enabled=true")
			.withBean("otherRoutes", RouterFunction.class, () -> other)
			.run((context) -> assertThat(context.getBeansOfType(RouterFunction.class))
				.containsOnlyKeys("ductorConsoleRoutes", "otherRoutes"));
	}

	static class UserEndpointCheck extends ConsoleEndpointCheck {

		UserEndpointCheck() {
			super(new MockEnvironment(), new StaticListableBeanFactory().getBeanProvider(PathMappedEndpoints.class),
					"/ductor");
		}

		@Override
		EndpointReach.Finding finding() {
			return new EndpointReach.Finding(true, "the application's own finding");
		}

	}

	@Test
	void hiddenFieldsAreMaskedAtAnyDepth() {
		this.runner.withPropertyValues("ductor.console.enabled=true", "ductor.console.hidden-fields=cardNumber,iban")
			.run((context) -> assertThat(context.getBean(PayloadMask.class)
				.mask("[{\"card\":{\"cardNumber\":\"4111\"},\"iban\":\"DE00\",\"name\":\"heidi\"}, \"x\"]")).isEqualTo(
						"[{\"card\":{\"cardNumber\":\"[hidden]\"},\"iban\":\"[hidden]\",\"name\":\"heidi\"},\"x\"]"));
	}

	@Test
	void withASecurityFilterChainOnlyTheOperatorRoleMayWrite() {
		this.runner.withPropertyValues("ductor.console.enabled=true", "ductor.console.operator-role=ON_CALL")
			.withBean(SecurityFilterChain.class, () -> mock(SecurityFilterChain.class))
			.run((context) -> {
				OperatorAccess access = context.getBean(OperatorAccess.class);
				assertThat(access).isInstanceOf(RoleOperatorAccess.class);
				assertThat(access.mayWrite(org.springframework.boot.actuate.endpoint.SecurityContext.NONE)).isFalse();
			});
	}

	@Test
	void withoutSpringSecurityEveryCallerTheApplicationLetsThroughMayWrite() {
		this.runner.withPropertyValues("ductor.console.enabled=true")
			.withClassLoader(new FilteredClassLoader("org.springframework.security"))
			.run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean(OperatorAccess.class));
	}

	@Test
	void aBadPathOrRoleFailsStartUpNamingTheProperty() {
		this.runner.withPropertyValues("ductor.console.enabled=true", "ductor.console.path=ductor/")
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.rootCause()
				.hasMessageContaining("ductor.console.path"));
		this.runner.withPropertyValues("ductor.console.enabled=true", "ductor.console.operator-role=ROLE_OPS")
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.rootCause()
				.hasMessageContaining("ductor.console.operator-role"));
	}

}
