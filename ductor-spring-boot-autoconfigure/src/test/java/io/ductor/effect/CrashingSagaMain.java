package io.ductor.effect;

import io.ductor.test.TestDatabase;

/**
 * The saga's drainer in a JVM of its own, for {@link SagaCrashTest}: it dispatches the
 * forward steps and the compensations of the database it is given until it is killed.
 */
public final class CrashingSagaMain {

	private CrashingSagaMain() {
	}

	public static void main(String[] args) throws InterruptedException {
		SagaEffects.callMillis = 100;
		TestDatabase database = new TestDatabase(args[0], args[1], (args.length > 2) ? args[2] : null, "saga-crash");
		EffectInstances.start(database, SagaEffects.Config.class, "ductor.effects.drainer.lease=2s",
				"ductor.effects.reconciler.interval=300ms", "ductor.effects.drainer.poll-interval=100ms",
				"ductor.effects.drainer.concurrency=4", "ductor.effects.drainer.batch-size=20");
		Thread.currentThread().join();
	}

}
