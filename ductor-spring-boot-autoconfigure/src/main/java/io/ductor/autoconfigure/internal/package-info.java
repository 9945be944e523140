/**
 * Ductor's implementation of {@code io.ductor.autoconfigure}: not for applications, and
 * changed without notice.
 */
@NullMarked
package io.ductor.autoconfigure.internal;

import org.jspecify.annotations.NullMarked;
