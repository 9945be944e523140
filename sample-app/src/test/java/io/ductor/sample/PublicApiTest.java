package io.ductor.sample;

import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.ductor.test.PublicApiRules;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Ductor's public API is exactly what the README's "Public API" section names: every
 * public top-level type of the library outside an {@code internal} package is listed
 * there, and every listed type exists. No signature of that API names an {@code internal}
 * type, and no package depends on another that depends back on it (the rules of
 * {@link PublicApiRules}, here for every module on the shop's class path, the Kafka
 * module's included). The modules the shop does not use hold their own packages to the
 * same rules ({@code AmqpPublicApiTest}, {@code ModulithPublicApiTest}). The shop is a
 * user application, so it reaches nothing internal.
 */
class PublicApiTest {

	/** Packages of modules that are not on the shop's class path; each checks its own. */
	private static final List<String> CHECKED_BY_THEIR_MODULE = List.of("io.ductor.amqp", "io.ductor.modulith");

	private static JavaClasses library;

	private static JavaClasses shop;

	@BeforeAll
	static void importClasses() {
		JavaClasses all = new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
			.importPackages("io.ductor");
		library = all.that(DescribedPredicate.describe("the library",
				(JavaClass c) -> !PublicApiRules.inPackage(c, "io.ductor.sample")
						&& !PublicApiRules.inPackage(c, "io.ductor.test")));
		shop = all.that(DescribedPredicate.describe("the shop",
				(JavaClass c) -> PublicApiRules.inPackage(c, "io.ductor.sample")));
	}

	@Test
	void everyPublicTypeOutsideInternalPackagesIsNamedInTheReadme() {
		Set<String> documented = PublicApiRules.documentedTypes()
			.stream()
			.filter((name) -> CHECKED_BY_THEIR_MODULE.stream().noneMatch((module) -> name.startsWith(module + ".")))
			.collect(Collectors.toCollection(TreeSet::new));
		Set<String> published = PublicApiRules.publishedTypes(library);
		assertThat(published).as("public types the README's Public API section does not name").isSubsetOf(documented);
		assertThat(documented).as("types the README's Public API section names that are not public library types")
			.isSubsetOf(published);
	}

	@Test
	void theKafkaModuleIsOnTheClassPathAndHeldToTheRules() {
		assertThat(PublicApiRules.publishedTypes(library)).contains("io.ductor.kafka.DurableKafka",
				"io.ductor.kafka.autoconfigure.DuctorKafkaAutoConfiguration");
	}

	@Test
	void noPublicSignatureNamesAnInternalType() {
		assertThat(PublicApiRules.internalTypesInSignatures(library))
			.as("public signatures outside internal packages that name an internal type")
			.isEmpty();
	}

	@Test
	void noPackageDependsOnAPackageThatDependsBackOnIt() {
		assertThat(PublicApiRules.packageCycles(library)).as("cycles between the library's packages").isEmpty();
	}

	@Test
	void everyPackageOfTheLibraryAndTheShopIsNullMarked() {
		Set<String> unmarked = new TreeSet<>(PublicApiRules.packagesNotNullMarked(library));
		unmarked.addAll(PublicApiRules.packagesNotNullMarked(shop));
		assertThat(unmarked).as("packages without @NullMarked in their package-info.java").isEmpty();
	}

	@Test
	void theShopUsesOnlyThePublicApi() {
		noClasses().should().dependOnClassesThat().resideInAPackage("io.ductor..internal..").check(shop);
	}

}
