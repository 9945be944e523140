/**
 * Ductor's implementation of {@code io.ductor.health}: not for applications, and changed
 * without notice.
 */
@NullMarked
package io.ductor.health.internal;

import org.jspecify.annotations.NullMarked;
