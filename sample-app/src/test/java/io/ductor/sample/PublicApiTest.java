package io.ductor.sample;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.JavaModifier;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Ductor's public API is exactly what the README's "Public API" section names: every
 * public top-level type of the library outside an {@code internal} package is listed
 * there, and every listed type exists. The shop is a user application, so it reaches
 * nothing internal.
 */
class PublicApiTest {

	private static final Pattern API_LINE = Pattern.compile("^- `(io\\.ductor[a-z.]*)`: (.+)$");

	private static final Pattern NAME = Pattern.compile("`([A-Za-z0-9]+)`");

	private static JavaClasses library;

	private static JavaClasses shop;

	@BeforeAll
	static void importClasses() {
		JavaClasses all = new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
			.importPackages("io.ductor");
		library = all.that(DescribedPredicate.describe("the library",
				(JavaClass c) -> !inPackage(c, "io.ductor.sample") && !inPackage(c, "io.ductor.test")));
		shop = all.that(DescribedPredicate.describe("the shop", (JavaClass c) -> inPackage(c, "io.ductor.sample")));
	}

	/**
	 * Whether {@code type} is in package {@code name} or one of its sub-packages:
	 * {@code io.ductor.testing} (the library) is not in {@code io.ductor.test} (the
	 * build's test support).
	 */
	private static boolean inPackage(JavaClass type, String name) {
		return type.getPackageName().equals(name) || type.getPackageName().startsWith(name + ".");
	}

	@Test
	void everyPublicTypeOutsideInternalPackagesIsNamedInTheReadme() throws IOException {
		Set<String> documented = documentedTypes();
		Set<String> published = new TreeSet<>();
		for (JavaClass type : library) {
			if (type.isTopLevelClass() && type.getModifiers().contains(JavaModifier.PUBLIC)
					&& !type.getPackageName().contains(".internal")) {
				published.add(type.getName());
			}
		}
		assertThat(published).as("public types the README's Public API section does not name").isSubsetOf(documented);
		assertThat(documented).as("types the README's Public API section names that are not public library types")
			.isSubsetOf(published);
	}

	@Test
	void theShopUsesOnlyThePublicApi() {
		noClasses().should().dependOnClassesThat().resideInAPackage("io.ductor..internal..").check(shop);
	}

	static Set<String> documentedTypes() throws IOException {
		Map<String, String> sections = new TreeMap<>();
		Set<String> names = new TreeSet<>();
		boolean inSection = false;
		for (String line : Files.readAllLines(readme())) {
			if (line.startsWith("## ")) {
				inSection = line.equals("## Public API");
				continue;
			}
			Matcher api = API_LINE.matcher(line);
			if (inSection && api.matches()) {
				Matcher name = NAME.matcher(api.group(2));
				while (name.find()) {
					names.add(api.group(1) + "." + name.group(1));
				}
				sections.put(api.group(1), line);
			}
		}
		assertThat(sections).as("packages listed under '## Public API' in README.md").isNotEmpty();
		return names;
	}

	private static Path readme() {
		for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
			if (Files.isRegularFile(dir.resolve("README.md")) && Files.isDirectory(dir.resolve("sample-app"))) {
				return dir.resolve("README.md");
			}
		}
		throw new IllegalStateException("README.md not found above " + Path.of("").toAbsolutePath());
	}

}
