package io.ductor.effect;

import java.time.OffsetDateTime;

import org.jspecify.annotations.Nullable;

/**
 * An effect intent as stored in {@code eec_effect_intent}.
 *
 * @param id the intent id
 * @param effectName the effect's name
 * @param idempotencyKey the stable key
 * @param status the status
 * @param receiver the receiver kind
 * @param attempts attempts started so far
 * @param maxAttempts the attempt limit
 * @param nextAttemptAt when the next attempt is due
 * @param leaseOwner the drainer holding the intent while in flight, or {@code null}
 * @param leaseExpiresAt when that lease ends, or {@code null}
 * @param orderingKey the ordering key, or {@code null}
 * @param alarmName the alarm this intent is an occurrence of, or {@code null}
 * @param runId the run whose tick recorded the intent, or {@code null}
 * @param lastError the last attempt's error, or the note on the intent's last move (an
 * operator's decision, a bulk retry, a supersession or a cancellation), or {@code null}
 * @param payloadJson the arguments as a JSON array
 * @param createdAt when the intent was recorded
 * @param updatedAt when it last changed
 * @param finishedAt when it reached completed, failed or cancelled, or {@code null}
 * @param reconcileRounds how often its reconciler was asked about the last attempt whose
 * outcome was unknown (see {@link EffectReconciler})
 * @param reconcileOutcome the reconciler's last answer ({@code APPLIED},
 * {@code NOT_APPLIED}, {@code UNKNOWN}, or {@code FAILED} when it threw), or {@code null}
 * when it was never asked
 * @param traceContext the trace context of the code that recorded the intent, as a JSON
 * object of its propagated fields ({@code traceparent}, {@code tracestate}, baggage), or
 * {@code null} when it was recorded without a tracer
 */
public record EffectIntent(long id, String effectName, String idempotencyKey, EffectStatus status, Receiver receiver,
		int attempts, int maxAttempts, OffsetDateTime nextAttemptAt, @Nullable String leaseOwner,
		@Nullable OffsetDateTime leaseExpiresAt, @Nullable String orderingKey, @Nullable String alarmName,
		@Nullable String runId, @Nullable String lastError, String payloadJson, OffsetDateTime createdAt,
		OffsetDateTime updatedAt, @Nullable OffsetDateTime finishedAt, int reconcileRounds,
		@Nullable String reconcileOutcome, @Nullable String traceContext) {
}
