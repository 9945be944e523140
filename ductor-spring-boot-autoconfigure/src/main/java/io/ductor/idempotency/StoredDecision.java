package io.ductor.idempotency;

import java.time.OffsetDateTime;

import org.jspecify.annotations.Nullable;

/**
 * A completed decision, as stored.
 *
 * @param decisionId the id the decision was completed with, or {@code null}
 * @param response the stored response, or {@code null} when none was stored
 * @param completedAt when it was completed (database time)
 * @param expiresAt until when it is replayed (database time); afterwards the key runs
 * again
 */
public record StoredDecision(@Nullable String decisionId, @Nullable StoredResponse response, OffsetDateTime completedAt,
		OffsetDateTime expiresAt) {
}
