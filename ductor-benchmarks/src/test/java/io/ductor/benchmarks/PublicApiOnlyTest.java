package io.ductor.benchmarks;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

/**
 * The benchmarks measure Ductor as an application uses it: through its public API and
 * auto-configuration, never its internal packages.
 */
class PublicApiOnlyTest {

	@Test
	void theBenchmarksUseOnlyThePublicApi() {
		JavaClasses benchmarks = new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
			.importPackages("io.ductor.benchmarks");
		noClasses().should().dependOnClassesThat().resideInAPackage("io.ductor..internal..").check(benchmarks);
	}

}
