package io.ductor.console;

import java.util.Set;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.actuate.autoconfigure.endpoint.web.WebEndpointProperties;
import org.springframework.boot.actuate.endpoint.SecurityContext;
import org.springframework.boot.actuate.endpoint.web.PathMappedEndpoints;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.core.io.ClassPathResource;
import org.springframework.web.servlet.function.RouterFunction;
import org.springframework.web.servlet.function.RouterFunctions;
import org.springframework.web.servlet.function.ServerResponse;

import io.ductor.actuate.OperatorAccess;
import io.ductor.actuate.autoconfigure.DuctorEndpointAutoConfiguration;
import io.ductor.actuate.internal.PayloadMask;
import io.ductor.console.internal.HiddenFieldsMask;
import io.ductor.console.internal.RoleOperatorAccess;

/**
 * The operator console, when {@code ductor.console.enabled=true} in a servlet web
 * application: one page under {@code ductor.console.path} with its assets from the jar,
 * reading and writing through the {@code ductor} actuator endpoint (which the application
 * must expose: when it does not, start-up logs a warning naming the property to set, and
 * the page shows the same message). It hides the {@code ductor.console.hidden-fields} of
 * intents' arguments, and with Spring Security present only callers in
 * {@code ductor.console.operator-role} may change intents.
 */
@AutoConfiguration(before = DuctorEndpointAutoConfiguration.class, afterName = {
		"org.springframework.boot.actuate.autoconfigure.endpoint.web.WebEndpointAutoConfiguration",
		"org.springframework.boot.security.autoconfigure.web.servlet.ServletWebSecurityAutoConfiguration",
		"org.springframework.boot.security.autoconfigure.actuate.web.servlet.ManagementWebSecurityAutoConfiguration" })
@ConditionalOnBooleanProperty("ductor.console.enabled")
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@ConditionalOnClass({ RouterFunction.class, SecurityContext.class, WebEndpointProperties.class })
@EnableConfigurationProperties(DuctorConsoleProperties.class)
public final class DuctorConsoleAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	ConsoleEndpointCheck ductorConsoleEndpointCheck(DuctorConsoleProperties properties, Environment environment,
			ObjectProvider<PathMappedEndpoints> endpoints) {
		return new ConsoleEndpointCheck(environment, endpoints, properties.path());
	}

	// by name, not by type: an application's own RouterFunction beans sit beside this one
	@Bean
	@ConditionalOnMissingBean(name = "ductorConsoleRoutes")
	RouterFunction<ServerResponse> ductorConsoleRoutes(DuctorConsoleProperties properties,
			WebEndpointProperties endpoints, ConsoleEndpointCheck check) {
		String base = endpoints.getBasePath();
		String endpointPath = ("/".equals(base) ? "" : base) + "/"
				+ endpoints.getPathMapping().getOrDefault("ductor", "ductor");
		ConsolePage page = new ConsolePage(properties.path(), endpointPath, check::finding);
		return RouterFunctions.route()
			.GET(properties.path(), page::render)
			.GET(properties.path() + "/", page::render)
			.add(RouterFunctions.resources(properties.path() + "/assets/**",
					new ClassPathResource("io/ductor/console/static/")))
			.build();
	}

	@Bean
	@ConditionalOnMissingBean
	PayloadMask ductorConsolePayloadMask(DuctorConsoleProperties properties) {
		return properties.hiddenFields().isEmpty() ? PayloadMask.NONE
				: new HiddenFieldsMask(Set.copyOf(properties.hiddenFields()));
	}

	/**
	 * When Spring Security guards the application's requests, only operators change
	 * intents.
	 */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(name = "org.springframework.security.web.SecurityFilterChain")
	@ConditionalOnBean(type = "org.springframework.security.web.SecurityFilterChain")
	static class OperatorRoleConfiguration {

		@Bean
		@ConditionalOnMissingBean
		OperatorAccess ductorConsoleOperatorAccess(DuctorConsoleProperties properties) {
			return new RoleOperatorAccess(properties.operatorRole());
		}

	}

}
