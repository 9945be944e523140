/**
 * Ductor's implementation of {@code io.ductor}: not for applications, and changed without
 * notice.
 */
@NullMarked
package io.ductor.internal;

import org.jspecify.annotations.NullMarked;
