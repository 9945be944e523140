/**
 * Ductor's implementation of {@code io.ductor.idempotency}: not for applications, and
 * changed without notice.
 */
@NullMarked
package io.ductor.idempotency.internal;

import org.jspecify.annotations.NullMarked;
