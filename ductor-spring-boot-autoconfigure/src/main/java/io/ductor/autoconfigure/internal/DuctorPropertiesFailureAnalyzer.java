package io.ductor.autoconfigure.internal;

import org.springframework.boot.context.properties.source.ConfigurationProperty;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationPropertySource;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.diagnostics.FailureAnalyzer;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.Environment;

/**
 * Reports a start-up that failed on Ductor's configuration: a key that names nothing
 * ({@link DuctorConfigurationException}), or a value out of range (an
 * {@link IllegalArgumentException} whose message begins with the property's name, as
 * every check of Ductor's properties writes it), with where the property was set. Ahead
 * of Spring Boot's own analyzers, whose report of a failed binding names the class rather
 * than the property.
 */
@Order(Ordered.HIGHEST_PRECEDENCE)
class DuctorPropertiesFailureAnalyzer implements FailureAnalyzer {

	private final Environment environment;

	DuctorPropertiesFailureAnalyzer(Environment environment) {
		this.environment = environment;
	}

	@Override
	public FailureAnalysis analyze(Throwable failure) {
		for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
			if (cause instanceof DuctorConfigurationException configuration) {
				return new FailureAnalysis(configuration.getMessage(), configuration.action(), configuration);
			}
		}
		IllegalArgumentException invalid = null;
		for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
			if (cause instanceof IllegalArgumentException illegal && illegal.getMessage() != null
					&& illegal.getMessage().startsWith("ductor.")) {
				invalid = illegal;
			}
		}
		if (invalid == null) {
			return null;
		}
		String message = invalid.getMessage();
		String property = message.substring(0, endOfName(message));
		String origin = origin(property);
		return new FailureAnalysis(
				"Invalid Ductor configuration: " + message + ((origin != null) ? "\n\n    (" + origin + ")" : ""),
				"Correct " + property + ". Ductor's properties, their defaults and limits are listed in"
						+ " docs/reference.md.",
				invalid);
	}

	private static int endOfName(String message) {
		int end = 0;
		while (end < message.length() && !Character.isWhitespace(message.charAt(end)) && message.charAt(end) != ':') {
			end++;
		}
		return end;
	}

	/** Where the property was set, when the environment knows it under that name. */
	private String origin(String property) {
		ConfigurationPropertyName name = ConfigurationPropertyName.ofIfValid(property);
		if (name == null || !(this.environment instanceof ConfigurableEnvironment configurable)) {
			return null;
		}
		for (ConfigurationPropertySource source : ConfigurationPropertySources.get(configurable)) {
			ConfigurationProperty found = source.getConfigurationProperty(name);
			if (found != null) {
				return DuctorPropertyNames.origin(found, source);
			}
		}
		return null;
	}

}
