package io.ductor.test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Starts a main class of the test class path in a JVM of its own, for the tests that kill
 * it with SIGKILL: the crash tests of the library, of the reliability suite and of the
 * sample.
 *
 * <p>
 * The JVM is quick to start and light on a small machine (C1 only, the serial collector,
 * a capped heap): the tests kill it within seconds, and several of them run at once.
 */
public final class ChildJvm {

	private ChildJvm() {
	}

	/**
	 * Starts {@code main} with {@code args}, its output and errors in {@code log} (its
	 * directory is created).
	 * @param maxHeap the heap cap, for example {@code 256m}
	 * @return the running JVM
	 */
	public static Process start(Class<?> main, Path log, String maxHeap, List<String> args) throws IOException {
		return start(main, log, List.of("-Xmx" + maxHeap), args);
	}

	/**
	 * Starts {@code main} with the JVM options {@code jvmOptions} and {@code args}, its
	 * output and errors in {@code log} (its directory is created).
	 * @return the running JVM
	 */
	public static Process start(Class<?> main, Path log, List<String> jvmOptions, List<String> args)
			throws IOException {
		List<String> command = new ArrayList<>();
		command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
		command.addAll(jvmOptions);
		command.addAll(List.of("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-cp",
				System.getProperty("java.class.path"), main.getName()));
		command.addAll(args);
		Path directory = log.toAbsolutePath().getParent();
		if (directory != null) {
			Files.createDirectories(directory);
		}
		return new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
	}

	/**
	 * Returns {@code properties} as command-line arguments of a Spring Boot application:
	 * {@code --key=value}.
	 */
	public static List<String> arguments(String... properties) {
		List<String> arguments = new ArrayList<>();
		for (String property : properties) {
			arguments.add("--" + property);
		}
		return arguments;
	}

}
