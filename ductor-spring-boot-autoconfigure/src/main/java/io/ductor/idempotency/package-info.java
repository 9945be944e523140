/**
 * Ingress idempotency: {@link io.ductor.idempotency.IdempotencyService} commits a
 * decision once per key.
 */
@NullMarked
package io.ductor.idempotency;

import org.jspecify.annotations.NullMarked;
