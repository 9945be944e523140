package io.ductor.actuate.internal;

import java.time.OffsetDateTime;

import org.jspecify.annotations.Nullable;

import io.ductor.effect.EffectStatus;

/**
 * Which intents an operator lists: every criterion is optional, and they all hold
 * together.
 *
 * @param status the status, or {@code null} for every status
 * @param effect the effect's name, or {@code null}
 * @param key the idempotency key, or {@code null}
 * @param runId the run whose tick recorded the intents, or {@code null}
 * @param createdFrom the earliest creation time (inclusive), or {@code null}
 * @param createdTo the latest creation time (exclusive), or {@code null}
 */
public record IntentFilter(@Nullable EffectStatus status, @Nullable String effect, @Nullable String key,
		@Nullable String runId, @Nullable OffsetDateTime createdFrom, @Nullable OffsetDateTime createdTo) {

	/**
	 * @param status the status @return a filter on the status alone
	 */
	public static IntentFilter byStatus(EffectStatus status) {
		return new IntentFilter(status, null, null, null, null, null);
	}

}
