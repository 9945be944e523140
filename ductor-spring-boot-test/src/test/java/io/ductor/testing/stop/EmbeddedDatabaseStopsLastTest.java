package io.ductor.testing.stop;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import io.ductor.test.ChildJvm;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A test JVM with a {@code @DuctorEmbeddedDatabase} test ends as Surefire ends it: the
 * embedded PostgreSQL stops after the test's context closed (Ductor's workers, the
 * notification listener and the pool first), so the log ends without a warning, an error
 * or a stack trace.
 */
class EmbeddedDatabaseStopsLastTest {

	@Test
	void theEmbeddedDatabaseStopsAfterTheTestContextsAndTheJvmEndsQuietly() throws Exception {
		Path log = Path.of("target", "embedded-database-stop.log");
		Process jvm = ChildJvm.start(EmbeddedDatabaseTestJvm.class, log, "256m", List.of());
		boolean ended = jvm.waitFor(5, TimeUnit.MINUTES);
		if (!ended) {
			jvm.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
		}
		String output = Files.readString(log);
		assertThat(ended).as("the JVM ended; see " + log).isTrue();
		assertThat(jvm.exitValue()).as("exit code; see " + log).isZero();
		assertThat(output).as("the test JVM's log, " + log)
			.contains(EmbeddedDatabaseTestJvm.STARTED)
			.contains(EmbeddedDatabaseTestJvm.STAYED_UP)
			.doesNotContain(EmbeddedDatabaseTestJvm.WENT_AWAY)
			.doesNotContain(" WARN ")
			.doesNotContain(" ERROR ")
			.doesNotContain("Exception")
			.doesNotContain("\tat ");
	}

}
