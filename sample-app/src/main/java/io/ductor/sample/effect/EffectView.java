package io.ductor.sample.effect;

import java.time.OffsetDateTime;
import java.util.Locale;

import io.ductor.effect.EffectIntent;

/**
 * An effect intent as the sample's pages and endpoints show it.
 *
 * @param id the intent id
 * @param name the effect's name
 * @param idempotencyKey the stable key forwarded to the receiver
 * @param status {@code pending}, {@code in_flight}, {@code reconciling},
 * {@code completed}, {@code failed}, {@code needs_decision} or {@code cancelled}
 * @param receiver {@code IDEMPOTENT} or {@code NOT_IDEMPOTENT}
 * @param attempts attempts started so far
 * @param maxAttempts the attempt limit
 * @param lastError the last failure, or {@code null}
 * @param nextAttemptAt when the next attempt is due
 * @param updatedAt when the intent last changed
 * @param reconcileRounds how often its reconciler was asked about its last unknown
 * outcome
 * @param reconcileOutcome the reconciler's last answer, or {@code null}
 */
public record EffectView(long id, String name, String idempotencyKey, String status, String receiver, int attempts,
		int maxAttempts, String lastError, OffsetDateTime nextAttemptAt, OffsetDateTime updatedAt, int reconcileRounds,
		String reconcileOutcome) {

	/**
	 * @param intent an intent
	 * @return its view
	 */
	public static EffectView of(EffectIntent intent) {
		return new EffectView(intent.id(), intent.effectName(), intent.idempotencyKey(),
				intent.status().name().toLowerCase(Locale.ROOT), intent.receiver().name(), intent.attempts(),
				intent.maxAttempts(), intent.lastError(), intent.nextAttemptAt(), intent.updatedAt(),
				intent.reconcileRounds(), intent.reconcileOutcome());
	}

}
