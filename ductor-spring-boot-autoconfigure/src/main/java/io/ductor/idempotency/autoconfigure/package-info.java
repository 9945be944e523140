/**
 * Auto-configuration of ingress idempotency and its {@code ductor.idempotency.*}
 * properties.
 */
@NullMarked
package io.ductor.idempotency.autoconfigure;

import org.jspecify.annotations.NullMarked;
