package io.ductor.idempotency;

import org.jspecify.annotations.Nullable;

/**
 * What {@link IdempotencyService#execute} returned.
 *
 * @param value the action's result: computed now, or read back from the stored decision
 * @param replayed whether the value was replayed instead of computed
 * @param decisionId the decision's id ({@code null} when opted out)
 * @param <T> the result type
 */
public record IdempotentResult<T>(T value, boolean replayed, @Nullable String decisionId) {
}
