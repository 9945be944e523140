package io.ductor.autoconfigure;

import java.nio.file.Path;

import io.ductor.test.docs.PropertiesTable;
import org.junit.jupiter.api.Test;

/**
 * The properties table of {@code docs/reference.md} is the configuration metadata the
 * build generates; {@code -Dductor.docs.update=true} rewrites it.
 */
class PropertiesDocumentationTest {

	@Test
	void referenceListsEveryPropertyOfTheMetadata() {
		new PropertiesTable(Path.of("target/classes/META-INF/spring-configuration-metadata.json"),
				Path.of("../docs/reference.md"), "ductor-properties", "ductor.",
				"./mvnw -o -pl ductor-spring-boot-autoconfigure -am test -Dsurefire.failIfNoSpecifiedTests=false -Dtest=PropertiesDocumentationTest")
			.check();
	}

}
