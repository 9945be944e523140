package io.ductor.kafka;

import java.nio.file.Path;

import org.junit.jupiter.api.Test;

import io.ductor.test.docs.PropertiesTable;

/**
 * The Kafka properties table of {@code docs/messaging.md} is this module's configuration
 * metadata; {@code -Dductor.docs.update=true} rewrites it.
 */
class KafkaPropertiesDocumentationTest {

	@Test
	void messagingGuideListsEveryKafkaProperty() {
		new PropertiesTable(Path.of("target/classes/META-INF/spring-configuration-metadata.json"),
				Path.of("../docs/messaging.md"), "ductor-kafka-properties", "ductor.kafka.",
				"./mvnw -o -pl ductor-spring-boot-kafka -am test -Dsurefire.failIfNoSpecifiedTests=false -Dtest=KafkaPropertiesDocumentationTest")
			.check();
	}

}
