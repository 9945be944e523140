package io.ductor.effect;

import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import io.ductor.autoconfigure.DuctorAutoConfiguration;
import io.ductor.autoconfigure.DuctorContextRunners;
import io.ductor.effect.autoconfigure.DuctorEffectsAutoConfiguration;
import io.ductor.test.PostgresExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An @EffectReconciler declaration that cannot work fails start-up with a message naming
 * it.
 */
class ReconcilerDeclarationTest {

	@RegisterExtension
	static final PostgresExtension postgres = new PostgresExtension();

	private final ApplicationContextRunner runner = DuctorContextRunners
		.onDatabase(postgres, DuctorAutoConfiguration.class, DuctorEffectsAutoConfiguration.class)
		.withBean(Letters.class);

	@Test
	void wellDeclaredReconcilersStart() {
		this.runner.withBean(ByKey.class).run((context) -> assertThat(context).hasNotFailed());
		this.runner.withBean(ByContextAndArguments.class).run((context) -> assertThat(context).hasNotFailed());
	}

	@Test
	void aReconcilerOfAnUnknownEffectFailsStartUp() {
		assertFails(UnknownEffect.class, "@EffectReconciler(\"leter\")",
				"names an effect that does not exist: no @DurableEffect method has the name 'leter'");
	}

	@Test
	void twoReconcilersOfOneEffectFailStartUp() {
		this.runner.withBean(ByKey.class).withBean(AnotherByKey.class).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(messages(context)).contains("Effect 'letter' has two @EffectReconciler methods")
				.contains(ByKey.class.getName())
				.contains(AnotherByKey.class.getName());
		});
	}

	@Test
	void wrongSignaturesFailStartUp() {
		assertFails(ReturnsBoolean.class, ReturnsBoolean.class.getName(), "must return ReconcileOutcome");
		assertFails(NoKey.class, NoKey.class.getName(),
				"must take the idempotency key (String) or the EffectContext first");
		assertFails(WrongArguments.class, WrongArguments.class.getName(),
				"optionally followed by exactly the parameters of");
		assertFails(NotPublic.class, NotPublic.class.getName(), "must be public");
		assertFails(Unnamed.class, Unnamed.class.getName(), "must name the effect it reconciles");
	}

	@Test
	void aBadReconcilePropertyFailsStartUp() {
		this.runner.withPropertyValues("ductor.effects.reconciliation.max-rounds=0").run((context) -> {
			assertThat(context).hasFailed();
			assertThat(messages(context))
				.contains("ductor.effects.reconciliation.max-rounds must be between 1 and 1000 but was 0");
		});
		this.runner.withPropertyValues("ductor.effects.reconciliation.backoff.multiplier=0.5").run((context) -> {
			assertThat(context).hasFailed();
			assertThat(messages(context))
				.contains("ductor.effects.reconciliation.backoff.multiplier must be at least 1");
		});
	}

	private void assertFails(Class<?> bean, String... problems) {
		this.runner.withBean(bean).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(messages(context)).contains(problems);
		});
	}

	private static String messages(AssertableApplicationContext context) {
		StringBuilder messages = new StringBuilder();
		for (Throwable ex = context.getStartupFailure(); ex != null; ex = ex.getCause()) {
			messages.append(ex.getMessage()).append('\n');
		}
		return messages.toString();
	}

	public static class Letters {

		@DurableEffect(name = "letter", key = "#id", receiver = Receiver.NOT_IDEMPOTENT)
		public void send(String id, List<String> lines) {
		}

	}

	public static class ByKey {

		@EffectReconciler("letter")
		public ReconcileOutcome sent(String key) {
			return ReconcileOutcome.UNKNOWN;
		}

	}

	public static class AnotherByKey {

		@EffectReconciler("letter")
		public ReconcileOutcome delivered(String key) {
			return ReconcileOutcome.UNKNOWN;
		}

	}

	public static class ByContextAndArguments {

		@EffectReconciler("letter")
		public ReconcileOutcome sent(EffectContext context, String id, List<String> lines) {
			return ReconcileOutcome.UNKNOWN;
		}

	}

	public static class UnknownEffect {

		@EffectReconciler("leter")
		public ReconcileOutcome sent(String key) {
			return ReconcileOutcome.UNKNOWN;
		}

	}

	public static class ReturnsBoolean {

		@EffectReconciler("letter")
		public boolean sent(String key) {
			return true;
		}

	}

	public static class NoKey {

		@EffectReconciler("letter")
		public ReconcileOutcome sent(long id) {
			return ReconcileOutcome.UNKNOWN;
		}

	}

	public static class WrongArguments {

		@EffectReconciler("letter")
		public ReconcileOutcome sent(String key, Integer id) {
			return ReconcileOutcome.UNKNOWN;
		}

	}

	public static class NotPublic {

		@EffectReconciler("letter")
		ReconcileOutcome sent(String key) {
			return ReconcileOutcome.UNKNOWN;
		}

	}

	public static class Unnamed {

		@EffectReconciler("")
		public ReconcileOutcome sent(String key) {
			return ReconcileOutcome.UNKNOWN;
		}

	}

}
