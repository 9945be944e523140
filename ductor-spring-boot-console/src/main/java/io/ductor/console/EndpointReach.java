package io.ductor.console;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.actuate.autoconfigure.endpoint.PropertiesEndpointAccessResolver;
import org.springframework.boot.actuate.autoconfigure.endpoint.expose.IncludeExcludeEndpointFilter;
import org.springframework.boot.actuate.autoconfigure.web.server.ManagementPortType;
import org.springframework.boot.actuate.endpoint.Access;
import org.springframework.boot.actuate.endpoint.EndpointId;
import org.springframework.boot.actuate.endpoint.OperationType;
import org.springframework.boot.actuate.endpoint.web.ExposableWebEndpoint;
import org.springframework.boot.actuate.endpoint.web.PathMappedEndpoint;
import org.springframework.boot.actuate.endpoint.web.PathMappedEndpoints;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.core.env.Environment;

/**
 * Whether the console's page can reach the {@code ductor} actuator endpoint over HTTP on
 * its own origin, and when it cannot, which property to set: the endpoint is not exposed
 * over the web ({@code management.endpoints.web.exposure.include}, {@code .exclude}), its
 * access is {@code none} or only {@code read-only}
 * ({@code management.endpoint.ductor.access} and the defaults and cap of
 * {@code management.endpoints.access.*}), it is served on a separate management port, or
 * the application has no {@code ductor} endpoint at all.
 */
final class EndpointReach {

	static final EndpointId DUCTOR = EndpointId.of("ductor");

	private static final String INCLUDE = "management.endpoints.web.exposure.include";

	private static final String EXCLUDE = "management.endpoints.web.exposure.exclude";

	private static final String ACCESS = "management.endpoint.ductor.access";

	private static final String ENABLED = "management.endpoint.ductor.enabled";

	private static final String DEFAULT_ACCESS = "management.endpoints.access.default";

	private static final String ENABLED_BY_DEFAULT = "management.endpoints.enabled-by-default";

	private static final String MAX_PERMITTED = "management.endpoints.access.max-permitted";

	private EndpointReach() {
	}

	/**
	 * What stands between the console and its endpoint.
	 *
	 * @param blocking whether the console can show nothing (the page shows only the
	 * message), rather than only some of its actions or only behind a proxy
	 * @param message what is wrong and the property that mends it
	 */
	record Finding(boolean blocking, String message) {
	}

	/**
	 * @param environment the application's properties
	 * @param endpoints the endpoints mapped over HTTP, or {@code null} when there are
	 * none
	 * @param consolePath where the console is served
	 * @return what stands between the console and its endpoint, or {@code null} when
	 * nothing does
	 */
	static @Nullable Finding check(Environment environment, @Nullable PathMappedEndpoints endpoints,
			String consolePath) {
		String console = "Ductor's operator console (ductor.console.enabled=true, at " + consolePath + ") ";
		ManagementPortType port = ManagementPortType.get(environment);
		if (port == ManagementPortType.DISABLED) {
			return new Finding(true, console + "shows nothing: actuator endpoints are off HTTP (management.server.port="
					+ environment.getProperty("management.server.port") + "); remove management.server.port.");
		}
		PathMappedEndpoint mapped = (endpoints != null) ? endpoints.getEndpoint(DUCTOR) : null;
		if (mapped instanceof ExposableWebEndpoint web && web.getOperations().isEmpty()) {
			// access none: mapped, but with nothing to call
			mapped = null;
		}
		Access access = access(environment);
		if (mapped == null) {
			String why = (access == Access.NONE) ? turnedOff(environment) : notExposed(environment);
			if (why == null) {
				why = "the application has no ductor actuator endpoint"
						+ ("false".equalsIgnoreCase(environment.getProperty("ductor.enabled"))
								? ": Ductor is off (ductor.enabled=false)"
								: ": Ductor's endpoint needs Ductor's auto-configuration with a DataSource");
			}
			return new Finding(true, console + "shows nothing: " + why + ".");
		}
		if (mapped instanceof ExposableWebEndpoint web
				&& web.getOperations().stream().noneMatch((operation) -> operation.getType() == OperationType.WRITE)) {
			return new Finding(false, console + "can read but not decide: " + readOnly(environment)
					+ ", so its decisions and the pause and resume of alarms are refused.");
		}
		if (port == ManagementPortType.DIFFERENT) {
			return new Finding(false, console + "calls the ductor endpoint on its own port, but the endpoint is "
					+ "served on the management port (management.server.port="
					+ environment.getProperty("management.server.port") + "): remove management.server.port, or "
					+ "let a proxy answer " + endpoints.getPath(DUCTOR) + " on the application's port.");
		}
		return null;
	}

	private static Access access(Environment environment) {
		try {
			return new PropertiesEndpointAccessResolver(environment).accessFor(DUCTOR, Access.UNRESTRICTED);
		}
		catch (RuntimeException ex) {
			// conflicting properties: Boot's own auto-configuration reports them
			return Access.UNRESTRICTED;
		}
	}

	/** Which property turned the endpoint off, and what to set instead. */
	private static @Nullable String turnedOff(Environment environment) {
		if (is(environment, ACCESS, "none")) {
			return "the ductor actuator endpoint is turned off by " + ACCESS + "=none; set " + ACCESS + "=unrestricted";
		}
		if (is(environment, ENABLED, "false")) {
			return "the ductor actuator endpoint is turned off by " + ENABLED + "=false; remove it and set " + ACCESS
					+ "=unrestricted";
		}
		if (is(environment, MAX_PERMITTED, "none")) {
			return "every actuator endpoint is turned off by " + MAX_PERMITTED + "=none; set " + MAX_PERMITTED
					+ "=unrestricted (or read-only, to read without deciding)";
		}
		if (is(environment, DEFAULT_ACCESS, "none")) {
			return "actuator endpoints are off by default (" + DEFAULT_ACCESS + "=none); set " + ACCESS
					+ "=unrestricted";
		}
		if (is(environment, ENABLED_BY_DEFAULT, "false")) {
			return "actuator endpoints are off by default (" + ENABLED_BY_DEFAULT + "=false); set " + ACCESS
					+ "=unrestricted";
		}
		return null;
	}

	/** Which property keeps the endpoint off the web, and what to set instead. */
	private static @Nullable String notExposed(Environment environment) {
		if (new IncludeExcludeEndpointFilter<>(ExposableWebEndpoint.class, environment,
				"management.endpoints.web.exposure", "health")
			.match(DUCTOR)) {
			return null;
		}
		List<String> excluded = list(environment, EXCLUDE, List.of());
		if (excluded.stream().anyMatch(EndpointReach::matchesDuctor)) {
			List<String> rest = new ArrayList<>(excluded);
			rest.removeIf(EndpointReach::matchesDuctor);
			return "the ductor actuator endpoint is kept off HTTP by " + EXCLUDE + "=" + String.join(",", excluded)
					+ "; remove " + (excluded.contains("*") ? "*" : "ductor") + " from it"
					+ (rest.isEmpty() ? "" : " (" + EXCLUDE + "=" + String.join(",", rest) + ")");
		}
		List<String> included = new ArrayList<>(list(environment, INCLUDE, List.of("health")));
		included.removeIf(String::isBlank);
		included.add("ductor");
		return "the ductor actuator endpoint is not exposed over HTTP; add ductor to " + INCLUDE + " (" + INCLUDE + "="
				+ String.join(",", included) + ")";
	}

	/** Why the endpoint is read-only, and what to set instead. */
	private static String readOnly(Environment environment) {
		if (is(environment, MAX_PERMITTED, "read-only") || is(environment, MAX_PERMITTED, "read_only")) {
			return "every actuator endpoint is capped at read-only by " + MAX_PERMITTED + "; set " + MAX_PERMITTED
					+ "=unrestricted";
		}
		if (environment.getProperty(ACCESS) != null) {
			return "the ductor actuator endpoint is read-only (" + ACCESS + "=" + environment.getProperty(ACCESS)
					+ "); set " + ACCESS + "=unrestricted";
		}
		return "the ductor actuator endpoint is read-only (" + DEFAULT_ACCESS + "="
				+ Objects.requireNonNullElse(environment.getProperty(DEFAULT_ACCESS), "read-only") + "); set " + ACCESS
				+ "=unrestricted";
	}

	private static boolean matchesDuctor(String pattern) {
		return "*".equals(pattern.strip()) || DUCTOR.equals(EndpointId.fromPropertyValue(pattern.strip()));
	}

	private static boolean is(Environment environment, String property, String value) {
		String set = environment.getProperty(property);
		return set != null && set.strip().toLowerCase(Locale.ROOT).replace('_', '-').equals(value);
	}

	private static List<String> list(Environment environment, String property, List<String> otherwise) {
		return Binder.get(environment).bind(property, Bindable.listOf(String.class)).orElse(otherwise);
	}

}
