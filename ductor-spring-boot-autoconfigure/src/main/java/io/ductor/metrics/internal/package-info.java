/**
 * Ductor's implementation of {@code io.ductor.metrics}: not for applications, and changed
 * without notice.
 */
@NullMarked
package io.ductor.metrics.internal;

import org.jspecify.annotations.NullMarked;
