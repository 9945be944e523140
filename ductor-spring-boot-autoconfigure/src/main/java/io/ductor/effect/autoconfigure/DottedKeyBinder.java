package io.ductor.effect.autoconfigure;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.bind.PropertySourcesPlaceholdersResolver;
import org.springframework.boot.context.properties.source.ConfigurationProperty;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName.Form;
import org.springframework.boot.context.properties.source.ConfigurationPropertySource;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.boot.context.properties.source.IterableConfigurationPropertySource;
import org.springframework.boot.convert.ApplicationConversionService;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.Environment;
import org.springframework.core.env.PropertySource;
import org.springframework.core.env.StandardEnvironment;

import io.ductor.autoconfigure.internal.DuctorConfigurationException;
import io.ductor.autoconfigure.internal.DuctorPropertyNames;
import io.ductor.autoconfigure.internal.Suggestions;

/**
 * Binds a map of Ductor's configuration whose keys may hold dots: effect names
 * ({@code billing.charge}) under {@code ductor.effects.overrides}, alarm names under
 * {@code ductor.effects.alarms}. Spring Boot's binder takes the first element after the
 * map's prefix as the key, so {@code overrides.billing.charge.max-concurrency} would be
 * the property {@code charge.max-concurrency} of an effect {@code billing}, which does
 * not exist, and nothing would be said. This binder reads the key as everything between
 * the prefix and the property of the value that ends the name (its last element, or its
 * last two for {@code backoff.initial}), so every form binds to the same key:
 * {@code prefix.billing.charge.leaf}, {@code prefix[billing.charge].leaf}, YAML nested or
 * bracketed, and environment variables ({@code PREFIX_BILLING_CHARGE_LEAF}, whose key is
 * in lower case; keys that differ only in case and dashes are one key, as Spring Boot
 * compares names). Values are then bound by Spring Boot's binder, property by property in
 * the environment's order of precedence, with its conversions and placeholders.
 * <p>
 * A name under the prefix that ends in no property of the value fails with a
 * {@link DuctorConfigurationException} naming it, where it was set and the closest
 * property.
 *
 * @param <T> the type of the map's values
 */
final class DottedKeyBinder<T> {

	private final ConfigurationPropertyName prefix;

	private final Class<T> type;

	private final String valueDescription;

	private final List<ConfigurationPropertyName> properties;

	private final List<ConfigurationPropertyName> listProperties;

	/**
	 * @param prefix the map's prefix, {@code ductor.effects.overrides}
	 * @param type the type of its values
	 * @param valueDescription what a value is, for messages ("an effect override")
	 * @param properties the properties of a value, relative to its key
	 * ({@code max-attempts}, {@code backoff.initial})
	 * @param listProperties those of them that are lists, which may end in an index
	 */
	DottedKeyBinder(String prefix, Class<T> type, String valueDescription, List<String> properties,
			List<String> listProperties) {
		this.prefix = ConfigurationPropertyName.of(prefix);
		this.type = type;
		this.valueDescription = valueDescription;
		// longest first, so that backoff.max is not read as max
		this.properties = properties.stream()
			.map(ConfigurationPropertyName::of)
			.sorted((a, b) -> Integer.compare(b.getNumberOfElements(), a.getNumberOfElements()))
			.toList();
		this.listProperties = listProperties.stream().map(ConfigurationPropertyName::of).toList();
	}

	/**
	 * Finds every key set in the environment, with where each of its properties is set.
	 * @param environment the application's environment
	 * @return the keys, in order, each with the properties that set it (the sources of
	 * highest precedence first)
	 * @throws DuctorConfigurationException for a name that ends in no property of a value
	 */
	Map<String, Key> scan(Environment environment) {
		Map<ConfigurationPropertyName, List<Setting>> byKey = new LinkedHashMap<>();
		int order = 0;
		for (ConfigurationPropertySource source : sources(environment)) {
			if (!(source instanceof IterableConfigurationPropertySource iterable)) {
				continue;
			}
			int sourceOrder = order++;
			try (Stream<ConfigurationPropertyName> names = iterable.stream()) {
				for (ConfigurationPropertyName name : names.filter(this.prefix::isAncestorOf).toList()) {
					ConfigurationProperty property = source.getConfigurationProperty(name);
					if (property == null) {
						continue;
					}
					Setting setting = setting(sourceOrder, source, name, property);
					byKey.computeIfAbsent(ConfigurationPropertyName.adapt(setting.key(), '.'), (k) -> new ArrayList<>())
						.add(setting);
				}
			}
		}
		Map<String, Key> keys = new TreeMap<>();
		for (List<Setting> settings : byKey.values()) {
			Key key = new Key(spelling(settings), List.copyOf(settings));
			keys.put(key.name(), key);
		}
		return keys;
	}

	/**
	 * Binds every key set in the environment.
	 * @param environment the application's environment
	 * @return the values by key, as {@link #scan} names them
	 */
	Map<String, T> bind(Environment environment) {
		Map<String, Key> keys = scan(environment);
		if (keys.isEmpty()) {
			return Map.of();
		}
		// one view per source, in the environment's order, whose names spell every key
		// as prefix[key] so that Spring Boot's map binder keeps the key whole
		List<Map<ConfigurationPropertyName, ConfigurationProperty>> views = new ArrayList<>();
		for (Key key : keys.values()) {
			ConfigurationPropertyName keyName = this.prefix.append("[" + key.name() + "]");
			for (Setting setting : key.settings()) {
				while (views.size() <= setting.sourceOrder()) {
					views.add(new LinkedHashMap<>());
				}
				ConfigurationPropertyName name = keyName.append(setting.property());
				views.get(setting.sourceOrder())
					.putIfAbsent(name,
							new ConfigurationProperty(name, setting.value().getValue(), setting.value().getOrigin()));
			}
		}
		List<ConfigurationPropertySource> sources = views.stream()
			.<ConfigurationPropertySource>map(KeyedView::new)
			.toList();
		Binder binder = new Binder(sources, new PropertySourcesPlaceholdersResolver(environment),
				ApplicationConversionService.getSharedInstance());
		Map<String, T> bound = binder.bind(this.prefix, Bindable.mapOf(String.class, this.type)).orElseGet(Map::of);
		return new TreeMap<>(bound);
	}

	private Setting setting(int sourceOrder, ConfigurationPropertySource source, ConfigurationPropertyName name,
			ConfigurationProperty value) {
		ConfigurationPropertyName rest = name.subName(this.prefix.getNumberOfElements());
		for (ConfigurationPropertyName property : this.properties) {
			int keyLength = keyLength(rest, property);
			if (keyLength > 0) {
				return new Setting(sourceOrder, isEnvironment(source), key(rest.chop(keyLength)),
						rest.subName(keyLength), value);
			}
		}
		throw unknownProperty(name, rest, value);
	}

	/**
	 * The number of elements of {@code rest} before {@code property}, when {@code rest}
	 * ends with it (or with it and an index, for a list); 0 otherwise.
	 */
	private int keyLength(ConfigurationPropertyName rest, ConfigurationPropertyName property) {
		int length = rest.getNumberOfElements();
		if (length > 1 && rest.isNumericIndex(length - 1) && this.listProperties.contains(property)) {
			length--;
		}
		int keyLength = length - property.getNumberOfElements();
		if (keyLength < 1 || !rest.chop(length).subName(keyLength).equals(property)) {
			return 0;
		}
		return keyLength;
	}

	private DuctorConfigurationException unknownProperty(ConfigurationPropertyName name, ConfigurationPropertyName rest,
			ConfigurationProperty value) {
		List<String> known = this.properties.stream().map(ConfigurationPropertyName::toString).toList();
		String last = rest.getLastElement(Form.ORIGINAL);
		String closest = null;
		if (rest.getNumberOfElements() > 1) {
			closest = Suggestions.closest(last, known);
			if (closest == null && rest.getNumberOfElements() > 2) {
				closest = Suggestions
					.closest(rest.getElement(rest.getNumberOfElements() - 2, Form.ORIGINAL) + "." + last, known);
			}
		}
		String written = written(name);
		String keyPart = (rest.getNumberOfElements() > 1) ? key(rest.chop(rest.getNumberOfElements() - 1)) : null;
		StringBuilder description = new StringBuilder("Property '").append(written)
			.append("' (")
			.append(origin(value))
			.append(") sets no property of ")
			.append(this.valueDescription);
		if (keyPart != null) {
			description.append(" '").append(keyPart).append("'");
		}
		description.append(": '").append(last).append("' is not one of ").append(String.join(", ", known));
		if (closest != null) {
			description.append("; did you mean '").append(closest).append("'?");
		}
		String action = "Write the property as " + this.prefix + ".<name>.<property> (or " + this.prefix
				+ "[<name>].<property>, or in an environment variable "
				+ this.prefix.toString().toUpperCase(java.util.Locale.ROOT).replace('.', '_').replace("-", "")
				+ "_<NAME>_<PROPERTY> without dashes), where <property> is one of " + String.join(", ", known) + ".";
		return new DuctorConfigurationException(description.toString(), action);
	}

	static String written(ConfigurationPropertyName name) {
		return DuctorPropertyNames.written(name);
	}

	static String origin(ConfigurationProperty property) {
		return DuctorPropertyNames.origin(property, null);
	}

	/** A key's elements joined with dots, as written. */
	private static String key(ConfigurationPropertyName elements) {
		List<String> parts = new ArrayList<>();
		for (int i = 0; i < elements.getNumberOfElements(); i++) {
			parts.add(elements.getElement(i, Form.ORIGINAL));
		}
		return String.join(".", parts);
	}

	/**
	 * How a key is spelled: as the first source that is not an environment variable
	 * writes it (environment variables lose the case), otherwise as the first one.
	 */
	private static String spelling(List<Setting> settings) {
		for (Setting setting : settings) {
			if (!setting.fromEnvironment()) {
				return setting.key();
			}
		}
		return settings.get(0).key();
	}

	private static boolean isEnvironment(ConfigurationPropertySource source) {
		return source.getUnderlyingSource() instanceof PropertySource<?> propertySource
				&& StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME.equals(propertySource.getName());
	}

	private static Iterable<ConfigurationPropertySource> sources(Environment environment) {
		return (environment instanceof ConfigurableEnvironment configurable)
				? ConfigurationPropertySources.get(configurable) : List.of();
	}

	/**
	 * One key of the map.
	 *
	 * @param name the key, as written
	 * @param settings the properties that set it, the sources of highest precedence first
	 */
	record Key(String name, List<Setting> settings) {

		/**
		 * @return the first property that sets this key, to name in messages
		 */
		ConfigurationProperty first() {
			return this.settings.get(0).value();
		}

	}

	/**
	 * One property under the map's prefix.
	 *
	 * @param sourceOrder the precedence of its source (0 is the highest)
	 * @param fromEnvironment whether it is an environment variable
	 * @param key the key it sets, as written
	 * @param property the property of the value it sets, relative to the key
	 * @param value its value and origin
	 */
	record Setting(int sourceOrder, boolean fromEnvironment, String key, ConfigurationPropertyName property,
			ConfigurationProperty value) {

	}

	/** The properties of one source, under the names that keep each key whole. */
	private static final class KeyedView implements IterableConfigurationPropertySource {

		private final Map<ConfigurationPropertyName, ConfigurationProperty> properties;

		KeyedView(Map<ConfigurationPropertyName, ConfigurationProperty> properties) {
			this.properties = properties;
		}

		@Override
		public ConfigurationProperty getConfigurationProperty(ConfigurationPropertyName name) {
			return this.properties.get(name);
		}

		@Override
		public Stream<ConfigurationPropertyName> stream() {
			return this.properties.keySet().stream();
		}

	}

}
