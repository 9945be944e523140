/**
 * Ductor's implementation of {@code io.ductor.modulith}: not for applications, and
 * changed without notice.
 */
@NullMarked
package io.ductor.modulith.internal;

import org.jspecify.annotations.NullMarked;
