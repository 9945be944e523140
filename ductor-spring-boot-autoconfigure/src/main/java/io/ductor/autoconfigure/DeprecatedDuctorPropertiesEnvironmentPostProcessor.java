package io.ductor.autoconfigure;

import java.util.LinkedHashMap;
import java.util.Map;

import org.apache.commons.logging.Log;

import org.springframework.boot.EnvironmentPostProcessor;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.context.properties.source.ConfigurationProperty;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName.Form;
import org.springframework.boot.context.properties.source.ConfigurationPropertySource;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.boot.context.properties.source.IterableConfigurationPropertySource;
import org.springframework.boot.env.OriginTrackedMapPropertySource;
import org.springframework.boot.logging.DeferredLogFactory;
import org.springframework.boot.origin.OriginTrackedValue;
import org.springframework.core.Ordered;
import org.springframework.core.env.ConfigurableEnvironment;

/**
 * Honours the keys that moved under their feature in this version
 * ({@code ductor.drainer.*} is now {@code ductor.effects.drainer.*}, and so on): each old
 * key set in any property source (files, environment variables, command line) is copied
 * to its new name in a property source of lowest precedence, with one warning naming both
 * keys. A new key that is set wins over its old one.
 */
class DeprecatedDuctorPropertiesEnvironmentPostProcessor implements EnvironmentPostProcessor, Ordered {

	/** The property source that holds the old keys' values under their new names. */
	static final String PROPERTY_SOURCE_NAME = "ductorDeprecatedKeys";

	/** Old prefix to new prefix. */
	static final Map<ConfigurationPropertyName, ConfigurationPropertyName> MOVED = moved();

	private final Log logger;

	DeprecatedDuctorPropertiesEnvironmentPostProcessor(DeferredLogFactory logFactory) {
		this.logger = logFactory.getLog(DeprecatedDuctorPropertiesEnvironmentPostProcessor.class);
	}

	private static Map<ConfigurationPropertyName, ConfigurationPropertyName> moved() {
		Map<ConfigurationPropertyName, ConfigurationPropertyName> moved = new LinkedHashMap<>();
		moved.put(ConfigurationPropertyName.of("ductor.drainer"),
				ConfigurationPropertyName.of("ductor.effects.drainer"));
		moved.put(ConfigurationPropertyName.of("ductor.reconciler"),
				ConfigurationPropertyName.of("ductor.effects.reconciler"));
		moved.put(ConfigurationPropertyName.of("ductor.alarm-scheduler"),
				ConfigurationPropertyName.of("ductor.effects.alarm-scheduler"));
		moved.put(ConfigurationPropertyName.of("ductor.alarms"), ConfigurationPropertyName.of("ductor.effects.alarms"));
		moved.put(ConfigurationPropertyName.of("ductor.sweeper"),
				ConfigurationPropertyName.of("ductor.idempotency.sweeper"));
		return Map.copyOf(moved);
	}

	@Override
	public int getOrder() {
		// after the config data (application.properties, profiles) is loaded
		return Ordered.LOWEST_PRECEDENCE;
	}

	@Override
	public void postProcessEnvironment(ConfigurableEnvironment environment, SpringApplication application) {
		environment.getPropertySources().remove(PROPERTY_SOURCE_NAME);
		Iterable<ConfigurationPropertySource> sources = ConfigurationPropertySources.get(environment);
		Map<String, Object> renamed = new LinkedHashMap<>();
		for (ConfigurationPropertySource source : sources) {
			if (!(source instanceof IterableConfigurationPropertySource iterable)) {
				continue;
			}
			iterable.stream().forEach((name) -> MOVED.forEach((oldPrefix, newPrefix) -> {
				if (!oldPrefix.isAncestorOf(name)) {
					return;
				}
				ConfigurationPropertyName newName = newPrefix.append(name.subName(oldPrefix.getNumberOfElements()));
				String key = renamed(name, oldPrefix, newPrefix);
				if (renamed.containsKey(key)) {
					// a source of higher precedence set the old key already
					return;
				}
				if (isSet(sources, newName)) {
					this.logger.warn("Ductor ignores the deprecated property '" + name + "': '" + newName
							+ "', which replaces it, is set too");
					renamed.put(key, null);
					return;
				}
				ConfigurationProperty property = source.getConfigurationProperty(name);
				if (property == null) {
					return;
				}
				this.logger.warn("The property '" + name + "' is deprecated: use '" + newName
						+ "' instead. Ductor honours the old key in this version.");
				renamed.put(key, OriginTrackedValue.of(property.getValue(), property.getOrigin()));
			}));
		}
		renamed.values().removeIf((value) -> value == null);
		if (!renamed.isEmpty()) {
			environment.getPropertySources().addLast(new OriginTrackedMapPropertySource(PROPERTY_SOURCE_NAME, renamed));
		}
	}

	/**
	 * The new key in the old key's own spelling:
	 * {@link ConfigurationPropertyName#toString()} lower-cases, and a map key such as an
	 * alarm's name must keep its case.
	 */
	private static String renamed(ConfigurationPropertyName name, ConfigurationPropertyName oldPrefix,
			ConfigurationPropertyName newPrefix) {
		StringBuilder key = new StringBuilder(newPrefix.toString());
		for (int i = oldPrefix.getNumberOfElements(); i < name.getNumberOfElements(); i++) {
			String element = name.getElement(i, Form.ORIGINAL);
			if (name.isNumericIndex(i) || !element.matches("[A-Za-z0-9-]+")) {
				key.append('[').append(element).append(']');
			}
			else {
				key.append('.').append(element);
			}
		}
		return key.toString();
	}

	private static boolean isSet(Iterable<ConfigurationPropertySource> sources, ConfigurationPropertyName name) {
		for (ConfigurationPropertySource source : sources) {
			if (source.getConfigurationProperty(name) != null) {
				return true;
			}
		}
		return false;
	}

}
