package io.ductor.console;

import java.nio.file.Path;

import io.ductor.test.docs.PropertiesTable;
import org.junit.jupiter.api.Test;

/**
 * The properties table of {@code docs/console.md} is the console's configuration
 * metadata; {@code -Dductor.docs.update=true} rewrites it.
 */
class ConsolePropertiesDocumentationTest {

	@Test
	void consoleGuideListsEveryConsoleProperty() {
		new PropertiesTable(Path.of("target/classes/META-INF/spring-configuration-metadata.json"),
				Path.of("../docs/console.md"), "ductor-console-properties", "ductor.console.",
				"./mvnw -o -pl ductor-spring-boot-console -am test -Dsurefire.failIfNoSpecifiedTests=false -Dtest=ConsolePropertiesDocumentationTest")
			.check();
	}

}
