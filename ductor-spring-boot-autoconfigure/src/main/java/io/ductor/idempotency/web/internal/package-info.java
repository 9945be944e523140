/**
 * Ductor's implementation of {@code io.ductor.idempotency.web}: not for applications, and
 * changed without notice.
 */
@NullMarked
package io.ductor.idempotency.web.internal;

import org.jspecify.annotations.NullMarked;
