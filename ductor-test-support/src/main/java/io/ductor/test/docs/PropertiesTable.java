package io.ductor.test.docs;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import com.jayway.jsonpath.JsonPath;

/**
 * The properties table of a documentation file, generated from a module's configuration
 * metadata ({@code META-INF/spring-configuration-metadata.json} in the build's classes).
 * The table sits between {@code <!-- <marker>:begin -->} and
 * {@code <!-- <marker>:end -->}. {@link #check()} fails naming the keys whose rows
 * differ; with {@code -Dductor.docs.update=true} it rewrites the table instead.
 */
public final class PropertiesTable {

	/** The system property that makes {@link #check()} rewrite the table. */
	public static final String UPDATE_PROPERTY = "ductor.docs.update";

	private static final Pattern JAVADOC_CODE = Pattern.compile("\\{@(?:code|link|literal) ([^}]*)}");

	private final Path metadata;

	private final Path document;

	private final String marker;

	private final String prefix;

	private final String regenerate;

	/**
	 * @param metadata the configuration metadata file
	 * @param document the Markdown file holding the table
	 * @param marker the name of the marker comments around the table
	 * @param prefix only properties whose name starts with it are listed
	 * @param regenerate the command that regenerates the table, for the failure message
	 */
	public PropertiesTable(Path metadata, Path document, String marker, String prefix, String regenerate) {
		this.metadata = metadata;
		this.document = document;
		this.marker = marker;
		this.prefix = prefix;
		this.regenerate = regenerate;
	}

	/**
	 * Compares the document's table with the metadata, or rewrites it when
	 * {@code ductor.docs.update} is {@code true}.
	 * @throws AssertionError naming the differing keys when they differ
	 */
	public void check() {
		String text = read(this.document);
		String begin = "<!-- " + this.marker + ":begin -->";
		String end = "<!-- " + this.marker + ":end -->";
		int from = text.indexOf(begin);
		int to = text.indexOf(end);
		if (from < 0 || to < from) {
			throw new AssertionError(this.document + " has no " + begin + " ... " + end + " markers");
		}
		Map<String, String> expected = rows();
		String table = render(expected);
		String current = text.substring(from + begin.length(), to);
		if (current.equals(table)) {
			return;
		}
		if (Boolean.getBoolean(UPDATE_PROPERTY)) {
			write(this.document, text.substring(0, from + begin.length()) + table + text.substring(to));
			return;
		}
		Map<String, String> documented = parse(current);
		Collection<String> missing = new TreeSet<>(expected.keySet());
		missing.removeAll(documented.keySet());
		Collection<String> extra = new TreeSet<>(documented.keySet());
		extra.removeAll(expected.keySet());
		Collection<String> changed = new TreeSet<>();
		expected.forEach((key, row) -> {
			if (documented.containsKey(key) && !Objects.equals(documented.get(key), row)) {
				changed.add(key);
			}
		});
		StringBuilder message = new StringBuilder("The properties table in ").append(this.document)
			.append(" does not match the configuration metadata.");
		if (!missing.isEmpty()) {
			message.append("\n  not documented: ").append(String.join(", ", missing));
		}
		if (!extra.isEmpty()) {
			message.append("\n  documented but not in the metadata: ").append(String.join(", ", extra));
		}
		if (!changed.isEmpty()) {
			message.append("\n  documented differently: ").append(String.join(", ", changed));
		}
		if (missing.isEmpty() && extra.isEmpty() && changed.isEmpty()) {
			message.append("\n  (same rows, different order or layout)");
		}
		message.append("\nRegenerate it with: ")
			.append(this.regenerate)
			.append(" -D")
			.append(UPDATE_PROPERTY)
			.append("=true");
		throw new AssertionError(message.toString());
	}

	/** The table's rows from the metadata, by property name in alphabetical order. */
	Map<String, String> rows() {
		List<Map<String, Object>> properties = JsonPath.read(read(this.metadata), "$.properties[*]");
		Map<String, String> rows = new TreeMap<>();
		for (Map<String, Object> property : properties) {
			String name = (String) property.get("name");
			if (!name.startsWith(this.prefix) || property.containsKey("deprecation")
					|| Boolean.TRUE.equals(property.get("deprecated"))) {
				continue;
			}
			rows.put(name,
					"| `" + name + "` | " + type((String) property.get("type")) + " | "
							+ defaultValue(property.get("defaultValue")) + " | "
							+ description((String) property.get("description")) + " |");
		}
		return rows;
	}

	private static String render(Map<String, String> rows) {
		StringBuilder table = new StringBuilder("\n| Property | Type | Default | Description |\n|---|---|---|---|\n");
		rows.values().forEach((row) -> table.append(row).append('\n'));
		return table.toString();
	}

	private static Map<String, String> parse(String table) {
		Map<String, String> rows = new LinkedHashMap<>();
		Pattern row = Pattern.compile("^\\| `([^`]+)` \\|.*$", Pattern.MULTILINE);
		Matcher matcher = row.matcher(table);
		while (matcher.find()) {
			rows.put(matcher.group(1), matcher.group());
		}
		return rows;
	}

	private static String type(String type) {
		if (type == null) {
			return "";
		}
		String simple = type.replaceAll("[\\w.]+[.$](\\w+)", "$1");
		return "`" + simple.replace(",", ", ") + "`";
	}

	private static String defaultValue(Object value) {
		if (value == null) {
			return "";
		}
		if (value instanceof List<?> list) {
			List<String> items = new ArrayList<>();
			list.forEach((item) -> items.add(String.valueOf(item)));
			return "`" + String.join(",", items) + "`";
		}
		String text = String.valueOf(value);
		if (value instanceof Double && text.endsWith(".0")) {
			text = text.substring(0, text.length() - 2);
		}
		return "`" + text + "`";
	}

	private static String description(String description) {
		if (description == null) {
			return "";
		}
		String text = JAVADOC_CODE.matcher(description)
			.replaceAll((match) -> "`" + Matcher.quoteReplacement(match.group(1)) + "`");
		text = text.replaceAll("<[^>]+>", "").replaceAll("\\s+", " ").trim().replace("|", "\\|");
		return text.endsWith(".") ? text : text + ".";
	}

	private static String read(Path path) {
		try {
			return Files.readString(path, StandardCharsets.UTF_8);
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Cannot read " + path.toAbsolutePath(), ex);
		}
	}

	private static void write(Path path, String text) {
		try {
			Files.writeString(path, text, StandardCharsets.UTF_8);
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Cannot write " + path.toAbsolutePath(), ex);
		}
	}

}
