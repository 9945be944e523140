package io.ductor.test.docs;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.ductor.test.docs.DocSnippets.Block;
import io.ductor.test.docs.DocSnippets.Region;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * Every Java, YAML and properties block of {@code README.md} and {@code docs/*.md} is
 * checked against the code, so the documentation cannot drift from it:
 * <ul>
 * <li>a Java block is the code of a tagged region ({@code // tag::<name>[]} …
 * {@code // end::<name>[]}) of a source the build compiles, in the module whose class
 * path it needs: a change of the API that breaks the block breaks the build, and a change
 * of the block or of the region fails here;</li>
 * <li>a configuration block is bound by starting Ductor on it, where unknown keys and bad
 * values fail start-up: {@code DocumentedConfigurationTest} of the auto-configuration
 * module, and {@code DocumentedConsoleConfigurationTest} of the console's module for the
 * blocks that set {@code ductor.console.*};</li>
 * <li>or {@link DocSnippets#unchecked()} names it, with the reason.</li>
 * </ul>
 */
class DocumentationSnippetsTest {

	private static final Set<String> CHECKED_LANGUAGES = Set.of("java", "yaml", "yml", "properties");

	private final Path root = DocSnippets.root();

	private final List<Block> blocks = DocSnippets.blocks(this.root)
		.stream()
		.filter((block) -> CHECKED_LANGUAGES.contains(block.language()))
		.toList();

	private final List<Region> regions = DocSnippets.regions(this.root);

	@Test
	void everyJavaBlockIsTheCodeOfATaggedRegionOfACompiledSource() {
		List<String> unchecked = new ArrayList<>();
		for (Block block : this.blocks) {
			if (!block.language().equals("java") || DocSnippets.isUnchecked(block)) {
				continue;
			}
			if (this.regions.stream().noneMatch((region) -> DocSnippets.sameCode(block.text(), region.text()))) {
				Region closest = this.regions.stream()
					.max(Comparator.comparingInt((region) -> likeness(block.text(), region.text())))
					.orElse(null);
				unchecked.add(block.location() + " is the code of no tagged region"
						+ ((closest != null) ? " (the closest is " + closest + ")" : "") + ":\n" + block.text());
			}
		}
		assertThat(unchecked).as("Java blocks of the documentation that no compiled source holds").isEmpty();
	}

	@Test
	void everyTaggedRegionIsShownByTheDocumentation() {
		List<String> unused = this.regions.stream()
			.filter((region) -> this.blocks.stream()
				.noneMatch((block) -> block.language().equals("java")
						&& DocSnippets.sameCode(block.text(), region.text())))
			.map(Region::toString)
			.toList();
		assertThat(unused).as("tagged regions that no block of the documentation shows any more").isEmpty();
	}

	@Test
	void regionNamesAreUnique() {
		Map<String, List<Region>> byName = this.regions.stream().collect(Collectors.groupingBy(Region::name));
		assertThat(byName.values().stream().filter((same) -> same.size() > 1).toList()).isEmpty();
	}

	@Test
	void everyConfigurationBlockSetsKeysThatTheConfigurationTestsBind() {
		List<Block> configuration = DocumentedConfiguration.blocks(this.root);
		assertThat(configuration).isNotEmpty();
		for (Block block : configuration) {
			assertThat(DocumentedConfiguration.keys(block)).as(block.location()).isNotEmpty();
		}
	}

	@Test
	void theUncheckedBlocksExist() {
		Set<String> keys = this.blocks.stream().map(Block::key).collect(Collectors.toSet());
		assertThat(keys).containsAll(DocSnippets.unchecked().keySet());
	}

	@Test
	void sameCodeLeavesOutCommentsBlankSpaceAndThis() {
		assertThat(DocSnippets.sameCode("ticks.start(\"order\", id, state);   // once\n",
				"\t\tthis.ticks.start(\"order\", id,\n\t\t\t\tstate);\n"))
			.isTrue();
		assertThat(DocSnippets.sameCode("ticks.start(\"order\", id, state);", "ticks.start(\"order\", key, state);"))
			.isFalse();
		assertThat(DocSnippets.sameCode("ticks.start(\"order\", id, state);",
				"ticks.start(\"order\", id, state);\nticks.tick(id);"))
			.as("the whole region, not a part of it")
			.isFalse();
	}

	@Test
	void anElisionOfABlockStandsForAnyCodeOfTheRegion() {
		String documented = "public void charge(String orderId) { … }\npublic void refund(String orderId) { … }";
		assertThat(DocSnippets.sameCode(documented,
				"public void charge(String orderId) {\n\tgateway.charge(orderId);\n}\n\n"
						+ "public void refund(String orderId) {\n}\n"))
			.isTrue();
		assertThat(DocSnippets.sameCode(documented,
				"public void charge(String orderId) {\n\tgateway.charge(orderId);\n}\n\n"
						+ "public void refund(long orderId) {\n}\n"))
			.isFalse();
	}

	@Test
	void blocksAreReadWithTheirPageLineLanguageAndIndentation(@TempDir Path dir) throws IOException {
		Files.writeString(dir.resolve("pom.xml"), "<modules><module>lib</module></modules>");
		Files.writeString(dir.resolve("README.md"), "# Title\n\n```java\nint a;\n```\n");
		Files.createDirectories(dir.resolve("docs"));
		Files.writeString(dir.resolve("docs/page.md"),
				"1. A step:\n\n   ```\n   INFO started\n     indented\n   ```\n```yaml\na: 1\n```\n```properties\nb=2\n```\n");
		assertThat(DocSnippets.blocks(dir)).containsExactly(new Block("README.md", 3, "java", "int a;\n"),
				new Block("docs/page.md", 3, "", "INFO started\n  indented\n"),
				new Block("docs/page.md", 7, "yaml", "a: 1\n"), new Block("docs/page.md", 10, "properties", "b=2\n"));
	}

	@Test
	void regionsAreReadFromTheModulesSourcesAndMayNest(@TempDir Path dir) throws IOException {
		Files.writeString(dir.resolve("pom.xml"), "<modules>\n<module>lib</module>\n</modules>");
		Path sources = Files.createDirectories(dir.resolve("lib/src/test/java/x"));
		Files.writeString(sources.resolve("A.java"), """
				class A {
					// TAG::outer[]
					void a() {
						// TAG::inner[]
						b();
						// END::inner[]
					}
					// END::outer[]
				}
				""".replace("TAG::", "tag::").replace("END::", "end::"));
		Files.createDirectories(dir.resolve("elsewhere/src/main/java"));
		Files.writeString(dir.resolve("elsewhere/src/main/java/B.java"),
				"// TAG::notBuilt[]\n// END::notBuilt[]\n".replace("TAG::", "tag::").replace("END::", "end::"));
		assertThat(DocSnippets.regions(dir)).containsExactly(
				new Region("lib/src/test/java/x/A.java", 2, "outer", "\tvoid a() {\n\t\tb();\n\t}\n"),
				new Region("lib/src/test/java/x/A.java", 4, "inner", "\t\tb();\n"));
	}

	@Test
	void aRegionWithoutItsEndIsAnError(@TempDir Path dir) throws IOException {
		Files.writeString(dir.resolve("pom.xml"), "<modules><module>lib</module></modules>");
		Path sources = Files.createDirectories(dir.resolve("lib/src/main/java"));
		Files.writeString(sources.resolve("A.java"), "class A {\n// TAG::open[]\n}\n".replace("TAG", "tag"));
		assertThatIllegalStateException().isThrownBy(() -> DocSnippets.regions(dir))
			.withMessageContaining("lib/src/main/java/A.java:2 tags region 'open'");
	}

	/** How much of two pieces of code agrees at their start and end. */
	private static int likeness(String documented, String code) {
		String a = DocSnippets.normalize(documented);
		String b = DocSnippets.normalize(code);
		int prefix = 0;
		while (prefix < Math.min(a.length(), b.length()) && a.charAt(prefix) == b.charAt(prefix)) {
			prefix++;
		}
		int suffix = 0;
		while (suffix < Math.min(a.length(), b.length()) - prefix
				&& a.charAt(a.length() - 1 - suffix) == b.charAt(b.length() - 1 - suffix)) {
			suffix++;
		}
		return prefix + suffix;
	}

}
