package io.ductor.effect;

import java.io.IOException;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;

import org.springframework.jdbc.core.simple.JdbcClient;

import io.ductor.test.TestDatabase;

/**
 * A main class of the test class path in a JVM of its own, for the crash tests that kill
 * it with SIGKILL.
 */
final class ChildJvm {

	private ChildJvm() {
	}

	/**
	 * Start {@code main} with {@code args}, its output in {@code target/<logName>}.
	 * @return the running JVM
	 */
	static Process start(Class<?> main, String logName, List<String> args) throws IOException {
		return io.ductor.test.ChildJvm.start(main, Paths.get("target", logName), "256m", args);
	}

	/**
	 * The arguments the crashing mains read: the JDBC URL, {@code between}, the user, and
	 * the password when there is one.
	 */
	static List<String> connection(TestDatabase database, String... between) {
		List<String> args = new ArrayList<>(List.of(database.jdbcUrl()));
		args.addAll(List.of(between));
		args.add(database.username());
		if (database.password() != null) {
			args.add(database.password());
		}
		return args;
	}

	static boolean tableExists(JdbcClient jdbc, String table) {
		return jdbc.sql("SELECT to_regclass(?) IS NOT NULL").param(table).query(Boolean.class).single();
	}

}
