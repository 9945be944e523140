package io.ductor.reliability;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.ductor.test.TestDatabases;

/**
 * A scenario's parameters and figures, printed and written to
 * {@code target/reliability/<scenario>.md} (the material of RELIABILITY.md).
 */
final class Report {

	private final String scenario;

	private final Map<String, Object> parameters = new LinkedHashMap<>();

	private final Map<String, Object> figures = new LinkedHashMap<>();

	private String server;

	Report(String scenario) {
		this.scenario = scenario;
		this.parameters.put("profile", Scale.current().name());
		this.parameters.put("cores", Runtime.getRuntime().availableProcessors());
	}

	/** Names the server when it is not the test JVM's shared one. */
	Report server(String description) {
		this.server = description;
		return this;
	}

	Report parameter(String name, Object value) {
		this.parameters.put(name, value);
		return this;
	}

	Report figure(String name, Object value) {
		this.figures.put(name, value);
		return this;
	}

	Report figures(Map<String, Object> values) {
		this.figures.putAll(values);
		return this;
	}

	static String millis(Duration duration) {
		return duration.toMillis() + " ms";
	}

	/** min / median / max of some durations. */
	static String spread(List<Duration> durations) {
		if (durations.isEmpty()) {
			return "n/a";
		}
		List<Duration> sorted = new ArrayList<>(durations);
		sorted.sort(null);
		return "min " + sorted.get(0).toMillis() + " ms, median " + sorted.get(sorted.size() / 2).toMillis()
				+ " ms, max " + sorted.get(sorted.size() - 1).toMillis() + " ms (n=" + sorted.size() + ")";
	}

	void write() {
		StringBuilder text = new StringBuilder("### " + this.scenario + "\n\n");
		text.append("Server: ")
			.append((this.server != null) ? this.server : describeServer())
			.append("\n\n| parameter | value |\n|---|---|\n");
		this.parameters.forEach((k, v) -> text.append("| ").append(k).append(" | ").append(v).append(" |\n"));
		text.append("\n| figure | value |\n|---|---|\n");
		this.figures.forEach((k, v) -> text.append("| ").append(k).append(" | ").append(v).append(" |\n"));
		System.out.println(text);
		try {
			Files.createDirectories(Scale.reports());
			Files.writeString(Scale.reports().resolve(this.scenario.replaceAll("[^A-Za-z0-9]+", "-") + ".md"), text);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	private static String describeServer() {
		try {
			return TestDatabases.describeServer();
		}
		catch (RuntimeException ex) {
			return "unknown";
		}
	}

	/** A fresh, empty directory for a scenario's logs and acknowledgement files. */
	static Path directory(String scenario) {
		Path directory = Scale.reports().resolve(scenario);
		try {
			if (Files.exists(directory)) {
				try (java.util.stream.Stream<Path> paths = Files.walk(directory)) {
					for (Path path : paths.sorted(java.util.Comparator.reverseOrder()).toList()) {
						Files.delete(path);
					}
				}
			}
			return Files.createDirectories(directory);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

}
