package io.ductor.effect;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import io.ductor.autoconfigure.DuctorAutoConfiguration;
import io.ductor.autoconfigure.DuctorContextRunners;
import io.ductor.effect.autoconfigure.DuctorEffectsAutoConfiguration;
import io.ductor.test.PostgresExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A declared compensation must name an effect that takes the same arguments, or start-up
 * fails.
 */
class CompensationDeclarationTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	private final ApplicationContextRunner runner = DuctorContextRunners
		.onDatabase(postgres, DuctorAutoConfiguration.class, DuctorEffectsAutoConfiguration.class)
		.withPropertyValues("ductor.effects.drainer.enabled=false");

	@Test
	void aCompensationTakingTheSameArgumentsStarts() {
		this.runner.withBean(Matching.class).run((context) -> assertThat(context).hasNotFailed());
	}

	@Test
	void anUnknownCompensationFailsStartUp() {
		this.runner.withBean(Unknown.class).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure())
				.hasMessageContaining("declares compensation 'no.such.effect', but no @DurableEffect has that name");
		});
	}

	@Test
	void aCompensationTakingOtherArgumentsFailsStartUp() {
		this.runner.withBean(Mismatched.class).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure()).hasMessageContaining("declares compensation 'mismatched.undo'")
				.hasMessageContaining("does not take the same parameters");
		});
	}

	public static class Matching {

		@DurableEffect(name = "matching.do", compensation = "matching.undo")
		public void doIt(String id, long amount) {
		}

		@DurableEffect(name = "matching.undo")
		public void undo(String id, long amount) {
		}

	}

	public static class Unknown {

		@DurableEffect(name = "unknown.do", compensation = "no.such.effect")
		public void doIt(String id) {
		}

	}

	public static class Mismatched {

		@DurableEffect(name = "mismatched.do", compensation = "mismatched.undo")
		public void doIt(String id, long amount) {
		}

		@DurableEffect(name = "mismatched.undo")
		public void undo(String id) {
		}

	}

}
