package io.ductor.modulith;

import org.junit.jupiter.api.Test;

import io.ductor.test.PublicApiRules;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The module's packages ({@code io.ductor.modulith} and below) keep the public API's
 * rules: every public type outside {@code internal} is named in the README's "Public API"
 * section and every type named there for them exists, no public signature names an
 * {@code internal} type, no two packages depend on each other, every package is
 * {@code @NullMarked}.
 */
class ModulithPublicApiTest {

	@Test
	void theModuleKeepsThePublicApiRules() {
		assertThat(PublicApiRules.violationsOf("io.ductor.modulith")).isEmpty();
	}

}
