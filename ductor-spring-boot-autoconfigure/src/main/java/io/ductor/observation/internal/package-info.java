/**
 * Ductor's implementation of {@code io.ductor.observation}: not for applications, and
 * changed without notice.
 */
@NullMarked
package io.ductor.observation.internal;

import org.jspecify.annotations.NullMarked;
