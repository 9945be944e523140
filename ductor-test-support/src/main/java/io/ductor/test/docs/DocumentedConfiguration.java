package io.ductor.test.docs;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Enumeration;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.env.PropertiesPropertySourceLoader;
import org.springframework.boot.env.PropertySourceLoader;
import org.springframework.boot.env.YamlPropertySourceLoader;
import org.springframework.boot.json.JsonParserFactory;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.EnumerablePropertySource;
import org.springframework.core.env.PropertySource;
import org.springframework.core.io.ByteArrayResource;
import org.springframework.util.StreamUtils;

import io.ductor.test.docs.DocSnippets.Block;

/**
 * The configuration blocks of the user documentation ({@code yaml}, {@code yml} and
 * {@code properties}), loaded as Spring Boot loads an application's files, so a test can
 * start Ductor on each and let start-up reject what Ductor does not read. Keys outside
 * {@code ductor.} are checked against the configuration metadata of the class path.
 */
public final class DocumentedConfiguration {

	/** The languages of configuration blocks. */
	public static final Set<String> LANGUAGES = Set.of("yaml", "yml", "properties");

	private static final String METADATA = "META-INF/spring-configuration-metadata.json";

	private static final ConfigurationPropertyName DUCTOR = ConfigurationPropertyName.of("ductor");

	private static final ConfigurationPropertyName CONSOLE = ConfigurationPropertyName.of("ductor.console");

	private DocumentedConfiguration() {
	}

	/**
	 * Every configuration block of the documentation but those
	 * {@link DocSnippets#unchecked()} names.
	 * @param root the project's root directory
	 * @return the blocks, in the order of {@link DocSnippets#blocks(Path)}
	 */
	public static List<Block> blocks(Path root) {
		return DocSnippets.blocks(root)
			.stream()
			.filter((block) -> LANGUAGES.contains(block.language()) && !DocSnippets.isUnchecked(block))
			.toList();
	}

	/**
	 * Whether a block sets properties of the console, which only the console's module
	 * knows.
	 * @param block a configuration block
	 * @return whether one of its keys is under {@code ductor.console}
	 */
	public static boolean setsConsoleProperties(Block block) {
		return keys(block).stream().anyMatch(CONSOLE::isAncestorOf);
	}

	/**
	 * The block as the property sources Spring Boot makes of a file with its text; the
	 * block's location is the name of its origin.
	 * @param block a configuration block
	 * @return its property sources
	 */
	public static List<PropertySource<?>> load(Block block) {
		PropertySourceLoader loader = block.language().equals("properties") ? new PropertiesPropertySourceLoader()
				: new YamlPropertySourceLoader();
		ByteArrayResource resource = new ByteArrayResource(block.text().getBytes(StandardCharsets.UTF_8),
				block.location());
		try {
			return loader.load(block.location(), resource);
		}
		catch (IOException | RuntimeException ex) {
			throw new IllegalStateException(block.location() + " is not valid " + block.language(), ex);
		}
	}

	/**
	 * Adds the block to an environment, ahead of its other property sources.
	 * @param block a configuration block
	 * @param environment the environment of the application under test
	 */
	public static void addTo(Block block, ConfigurableEnvironment environment) {
		List<PropertySource<?>> sources = new ArrayList<>(load(block));
		Collections.reverse(sources);
		sources.forEach(environment.getPropertySources()::addFirst);
	}

	/**
	 * The keys the block sets.
	 * @param block a configuration block
	 * @return its keys, in their canonical form
	 */
	public static Set<ConfigurationPropertyName> keys(Block block) {
		Set<ConfigurationPropertyName> keys = new LinkedHashSet<>();
		for (PropertySource<?> source : load(block)) {
			if (source instanceof EnumerablePropertySource<?> enumerable) {
				for (String name : enumerable.getPropertyNames()) {
					ConfigurationPropertyName key = ConfigurationPropertyName.ofIfValid(name);
					keys.add((key != null) ? key : ConfigurationPropertyName.adapt(name, '.'));
				}
			}
		}
		return keys;
	}

	/**
	 * The keys of the block outside {@code ductor.} that no configuration metadata of the
	 * class path names, neither as a property nor under a map or list property.
	 * @param block a configuration block
	 * @param classLoader the class path of the module under test
	 * @return the unknown keys, empty when every key outside {@code ductor.} is known
	 */
	public static List<String> unknownKeysOutsideDuctor(Block block, ClassLoader classLoader) {
		Set<ConfigurationPropertyName> properties = new HashSet<>();
		List<ConfigurationPropertyName> containers = new ArrayList<>();
		readMetadata(classLoader, properties, containers);
		List<String> unknown = new ArrayList<>();
		for (ConfigurationPropertyName key : keys(block)) {
			if (DUCTOR.isAncestorOf(key) || properties.contains(key)
					|| containers.stream().anyMatch((container) -> container.isAncestorOf(key))) {
				continue;
			}
			unknown.add(key.toString());
		}
		return unknown;
	}

	private static void readMetadata(ClassLoader classLoader, Set<ConfigurationPropertyName> properties,
			List<ConfigurationPropertyName> containers) {
		try {
			Enumeration<URL> resources = classLoader.getResources(METADATA);
			while (resources.hasMoreElements()) {
				try (InputStream in = resources.nextElement().openStream()) {
					Object entries = JsonParserFactory.getJsonParser()
						.parseMap(StreamUtils.copyToString(in, StandardCharsets.UTF_8))
						.get("properties");
					if (!(entries instanceof List<?> list)) {
						continue;
					}
					for (Object entry : list) {
						if (entry instanceof Map<?, ?> property && property.get("name") instanceof String name) {
							ConfigurationPropertyName parsed = ConfigurationPropertyName.ofIfValid(name);
							if (parsed == null) {
								continue;
							}
							properties.add(parsed);
							if (property.get("type") instanceof String type && isContainer(type)) {
								containers.add(parsed);
							}
						}
					}
				}
			}
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	private static boolean isContainer(String type) {
		return type.startsWith("java.util.Map") || type.startsWith("java.util.List") || type.startsWith("java.util.Set")
				|| type.startsWith("java.util.Collection") || type.endsWith("[]");
	}

}
