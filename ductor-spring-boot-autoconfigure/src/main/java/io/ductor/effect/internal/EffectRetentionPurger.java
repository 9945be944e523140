package io.ductor.effect.internal;

import java.time.Duration;

import io.ductor.worker.internal.RetentionPurger;

/**
 * Deletes completed and cancelled intents once they are older than the retention. Failed
 * and undecided intents stay until an operator acts on them. The retention is also the
 * window in which scheduling the same key again is recognised as a duplicate. An intent
 * that cannot be deleted (a foreign key of the application's refers to it) is kept for
 * another retention period, with the reason in {@code last_error}, and logged.
 */
public class EffectRetentionPurger implements RetentionPurger {

	private final IntentRetention intents;

	private final Duration retention;

	public EffectRetentionPurger(IntentRetention intents, Duration retention) {
		this.intents = intents;
		this.retention = retention;
	}

	@Override
	public int purge(int batchSize) {
		return this.intents.purge(this.retention, batchSize);
	}

}
