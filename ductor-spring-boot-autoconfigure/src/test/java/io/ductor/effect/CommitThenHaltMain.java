package io.ductor.effect;

import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.Ordered;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.transaction.support.TransactionTemplate;

import io.ductor.test.TestDatabase;

/**
 * For the crash test: records one intent of an idempotent and one of a non-idempotent
 * receiver in one transaction, and halts the JVM the moment that transaction has
 * committed, before Ductor's own after-commit work can hand them to a worker.
 */
public final class CommitThenHaltMain {

	private CommitThenHaltMain() {
	}

	public static void main(String[] args) {
		TestDatabase database = new TestDatabase(args[0], args[1], (args.length > 4) ? args[4] : null, "halt");
		ConfigurableApplicationContext context = EffectInstances.start(database, TestEffects.Config.class,
				"ductor.effects.drainer.lease=1s", "ductor.effects.reconciler.enabled=false");
		TestEffects effects = context.getBean(TestEffects.class);
		new TransactionTemplate(context.getBean(PlatformTransactionManager.class)).executeWithoutResult((status) -> {
			effects.scripted(args[2]);
			effects.mail(args[3]);
			TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {

				@Override
				public int getOrder() {
					return Ordered.HIGHEST_PRECEDENCE;
				}

				@Override
				public void afterCommit() {
					Runtime.getRuntime().halt(42);
				}

			});
		});
		throw new IllegalStateException("the JVM should have halted after the commit");
	}

}
