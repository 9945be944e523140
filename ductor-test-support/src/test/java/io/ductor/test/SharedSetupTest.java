package io.ductor.test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The setup the modules' tests share: datasource properties, the test profile, the
 * child-JVM launcher.
 */
class SharedSetupTest {

	@Test
	void springPropertiesPointAnApplicationAtTheDatabase() {
		TestDatabase withPassword = new TestDatabase("jdbc:postgresql://h/db", "u", "secret", "db");
		assertThat(withPassword.springProperties()).containsExactly("spring.datasource.url=jdbc:postgresql://h/db",
				"spring.datasource.username=u", "spring.datasource.password=secret");
		TestDatabase withoutPassword = new TestDatabase("jdbc:postgresql://h/db", "u", null, "db");
		assertThat(withoutPassword.springProperties()).contains("spring.datasource.password=");
		assertThat(ChildJvm.arguments(withPassword.springProperties())).first()
			.isEqualTo("--spring.datasource.url=jdbc:postgresql://h/db");
	}

	@Test
	void theProfileIsShortUnlessChaosIsAsked() {
		String before = System.getProperty(TestProfile.PROPERTY);
		try {
			System.clearProperty(TestProfile.PROPERTY);
			assertThat(TestProfile.chaos()).isFalse();
			assertThat(TestProfile.size(2, 5)).isEqualTo(2);
			System.setProperty(TestProfile.PROPERTY, "chaos");
			assertThat(TestProfile.chaos()).isTrue();
			assertThat(TestProfile.size(2, 5)).isEqualTo(5);
		}
		finally {
			if (before == null) {
				System.clearProperty(TestProfile.PROPERTY);
			}
			else {
				System.setProperty(TestProfile.PROPERTY, before);
			}
		}
	}

	@Test
	void aChildJvmRunsAMainOfTheTestClassPathWithItsOutputInTheLog(@TempDir Path directory) throws Exception {
		Path log = directory.resolve("logs/child.log");
		Process child = ChildJvm.start(Echo.class, log, "64m", List.of("hello", "child"));
		assertThat(child.waitFor(60, TimeUnit.SECONDS)).isTrue();
		assertThat(child.exitValue()).isZero();
		assertThat(Files.readString(log)).contains("hello child");
	}

	/** The child's main: prints its arguments. */
	static final class Echo {

		public static void main(String[] args) {
			System.out.println(String.join(" ", args));
		}

	}

}
