package io.ductor.amqp;

import java.nio.file.Path;

import org.junit.jupiter.api.Test;

import io.ductor.test.docs.PropertiesTable;

/**
 * The properties table of {@code docs/messaging.md} is the module's configuration
 * metadata; {@code -Dductor.docs.update=true} rewrites it.
 */
class AmqpPropertiesDocumentationTest {

	@Test
	void messagingGuideListsEveryAmqpProperty() {
		new PropertiesTable(Path.of("target/classes/META-INF/spring-configuration-metadata.json"),
				Path.of("../docs/messaging.md"), "ductor-amqp-properties", "ductor.amqp.",
				"./mvnw -o -pl ductor-spring-boot-amqp -am test -Dsurefire.failIfNoSpecifiedTests=false -Dtest=AmqpPropertiesDocumentationTest")
			.check();
	}

}
