package io.ductor.testing;

import java.time.OffsetDateTime;

import org.jspecify.annotations.Nullable;

/**
 * An idempotency key as stored in {@code eec_routing_idempotency}.
 *
 * @param tenantScope the tenant scope
 * @param pool the pool
 * @param key the key
 * @param status {@code pending}, {@code completed} or {@code failed_before_commit}
 * @param decisionId the decision the key was completed with, or {@code null}
 * @param responseStatus the stored response's HTTP status, or {@code null}
 * @param expiresAt the end of the pending reservation, then of the completed decision's
 * validity
 * @param expired whether {@code expiresAt} has passed by Ductor's clock
 */
public record StoredKey(String tenantScope, String pool, String key, String status, @Nullable String decisionId,
		@Nullable Integer responseStatus, OffsetDateTime expiresAt, boolean expired) {
}
