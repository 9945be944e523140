package io.ductor.autoconfigure.internal;

import java.io.IOException;
import java.io.InputStream;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Enumeration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;

import org.springframework.boot.context.properties.source.ConfigurationProperty;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName.Form;
import org.springframework.boot.context.properties.source.ConfigurationPropertySource;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.boot.context.properties.source.IterableConfigurationPropertySource;
import org.springframework.boot.json.JsonParserFactory;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.Environment;
import org.springframework.core.env.PropertySource;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.util.StreamUtils;

/**
 * The keys under {@code ductor.} that Ductor reads, from the configuration metadata of
 * every Ductor module on the class path, and the check that fails start-up on any other:
 * a misspelled key would otherwise be ignored without a word. Keys of the maps
 * ({@code ductor.effects.overrides}, {@code ductor.effects.alarms}) are checked by their
 * own binding; environment variables and JVM system properties are not checked here,
 * because other tools keep settings of their own there under the same prefix (Spring Boot
 * leaves them out of its own check of unbound properties for the same reason). Not an API
 * for applications.
 */
public final class DuctorPropertyNames {

	static final String METADATA = "META-INF/spring-configuration-metadata.json";

	private static final ConfigurationPropertyName ROOT = ConfigurationPropertyName.of("ductor");

	private static final Set<String> UNCHECKED_SOURCES = Set.of(
			StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME,
			StandardEnvironment.SYSTEM_PROPERTIES_PROPERTY_SOURCE_NAME);

	private final Set<ConfigurationPropertyName> properties;

	private final List<ConfigurationPropertyName> containers;

	private final Set<String> written;

	private DuctorPropertyNames(Set<ConfigurationPropertyName> properties, List<ConfigurationPropertyName> containers,
			Set<String> written) {
		this.properties = properties;
		this.containers = containers;
		this.written = written;
	}

	/**
	 * Reads the configuration metadata of the class path.
	 * @param classLoader the application's class loader
	 * @return the keys, or {@code null} when Ductor's own metadata is not on the class
	 * path (a repackaged jar without it), and no check can be made
	 */
	public static DuctorPropertyNames load(ClassLoader classLoader) {
		Set<ConfigurationPropertyName> properties = new HashSet<>();
		List<ConfigurationPropertyName> containers = new ArrayList<>();
		Set<String> written = new TreeSet<>();
		try {
			Enumeration<URL> resources = classLoader.getResources(METADATA);
			while (resources.hasMoreElements()) {
				for (Object entry : read(resources.nextElement())) {
					if (!(entry instanceof Map<?, ?> property) || !(property.get("name") instanceof String name)
							|| !name.startsWith("ductor.")) {
						continue;
					}
					ConfigurationPropertyName parsed = ConfigurationPropertyName.ofIfValid(name);
					if (parsed == null) {
						continue;
					}
					properties.add(parsed);
					written.add(name);
					if (property.get("type") instanceof String type && isContainer(type)) {
						containers.add(parsed);
					}
				}
			}
		}
		catch (IOException ex) {
			return null;
		}
		return properties.contains(ConfigurationPropertyName.of("ductor.enabled"))
				? new DuctorPropertyNames(properties, containers, written) : null;
	}

	private static List<Object> read(URL resource) throws IOException {
		try (InputStream in = resource.openStream()) {
			Object properties = JsonParserFactory.getJsonParser()
				.parseMap(StreamUtils.copyToString(in, StandardCharsets.UTF_8))
				.get("properties");
			return (properties instanceof List<?> list) ? List.copyOf(list) : List.of();
		}
	}

	private static boolean isContainer(String type) {
		return type.startsWith("java.util.Map") || type.startsWith("java.util.List") || type.startsWith("java.util.Set")
				|| type.startsWith("java.util.Collection") || type.endsWith("[]");
	}

	/**
	 * Whether Ductor reads a key.
	 * @param name a key under {@code ductor.}
	 * @return whether it is one of Ductor's properties or under one of its maps and lists
	 */
	public boolean isKnown(ConfigurationPropertyName name) {
		if (this.properties.contains(name)) {
			return true;
		}
		for (ConfigurationPropertyName container : this.containers) {
			if (container.isAncestorOf(name)) {
				return true;
			}
		}
		return false;
	}

	/**
	 * Fails when a property source of the application (other than environment variables
	 * and system properties) sets a key under {@code ductor.} that Ductor does not read.
	 * @param environment the application's environment
	 * @throws DuctorConfigurationException naming the first such key, where it was set
	 * and the closest key Ductor reads
	 */
	public void check(Environment environment) {
		if (!(environment instanceof ConfigurableEnvironment configurable)) {
			return;
		}
		for (ConfigurationPropertySource source : ConfigurationPropertySources.get(configurable)) {
			if (!(source instanceof IterableConfigurationPropertySource iterable) || isUnchecked(source)) {
				continue;
			}
			try (Stream<ConfigurationPropertyName> names = iterable.stream()) {
				for (ConfigurationPropertyName name : names.filter(ROOT::isAncestorOf).toList()) {
					if (!isKnown(name)) {
						throw unknown(name, source.getConfigurationProperty(name), source);
					}
				}
			}
		}
	}

	private DuctorConfigurationException unknown(ConfigurationPropertyName name, ConfigurationProperty property,
			ConfigurationPropertySource source) {
		String written = written(name);
		String closest = Suggestions.closest(written, this.written);
		StringBuilder description = new StringBuilder("Property '").append(written)
			.append("' (")
			.append(origin(property, source))
			.append(") is not a property of Ductor");
		if (closest != null) {
			description.append("; did you mean '").append(closest).append("'?");
		}
		String action;
		if (ConfigurationPropertyName.of("ductor.console").isAncestorOf(name)
				&& this.written.stream().noneMatch((known) -> known.startsWith("ductor.console."))) {
			action = "The ductor.console.* properties come with the console: add the dependency "
					+ "io.ductor:ductor-spring-boot-console, or remove the property.";
		}
		else {
			action = "Correct or remove the property. Ductor's properties are listed in docs/reference.md"
					+ " (and its console's in docs/console.md).";
		}
		return new DuctorConfigurationException(description.toString(), action);
	}

	/**
	 * A property name as a user writes it: original case, indexes and keys with dots in
	 * brackets.
	 * @param name the name
	 * @return the name as written
	 */
	public static String written(ConfigurationPropertyName name) {
		StringBuilder written = new StringBuilder();
		for (int i = 0; i < name.getNumberOfElements(); i++) {
			String element = name.getElement(i, Form.ORIGINAL);
			if (name.isNumericIndex(i) || element.contains(".")) {
				written.append('[').append(element).append(']');
			}
			else {
				written.append((i > 0) ? "." : "").append(element);
			}
		}
		return written.toString();
	}

	/**
	 * Where a property was set, for messages: its origin, or the name of its property
	 * source.
	 * @param property the property, or {@code null}
	 * @param source its source, or {@code null} for the property's own
	 * @return "from class path resource [application.yml] - 3:7" and the like
	 */
	public static String origin(ConfigurationProperty property, ConfigurationPropertySource source) {
		if (property != null && property.getOrigin() != null) {
			return "from " + property.getOrigin();
		}
		if (source == null && property != null) {
			source = property.getSource();
		}
		return (source != null && source.getUnderlyingSource() instanceof PropertySource<?> underlying)
				? "from property source '" + underlying.getName() + "'" : "origin unknown";
	}

	private static boolean isUnchecked(ConfigurationPropertySource source) {
		return source.getUnderlyingSource() instanceof PropertySource<?> underlying
				&& UNCHECKED_SOURCES.contains(underlying.getName());
	}

}
