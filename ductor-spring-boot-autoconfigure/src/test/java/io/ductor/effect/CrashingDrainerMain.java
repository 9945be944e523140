package io.ductor.effect;

import io.ductor.test.TestDatabase;

/**
 * A drainer in a JVM of its own, for the crash test: it drains the outbox of the database
 * it is given until it is killed.
 */
public final class CrashingDrainerMain {

	private CrashingDrainerMain() {
	}

	public static void main(String[] args) throws InterruptedException {
		TestEffects.shipMillis = 10;
		TestDatabase database = new TestDatabase(args[0], args[1], (args.length > 2) ? args[2] : null, "crash");
		EffectInstances.start(database, TestEffects.Config.class, "ductor.effects.drainer.lease=2s",
				"ductor.effects.reconciler.interval=300ms", "ductor.effects.drainer.poll-interval=100ms",
				"ductor.effects.drainer.concurrency=4", "ductor.effects.drainer.batch-size=20");
		Thread.currentThread().join();
	}

}
