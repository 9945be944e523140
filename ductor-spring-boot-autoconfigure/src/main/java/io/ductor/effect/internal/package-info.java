/**
 * Ductor's implementation of {@code io.ductor.effect}: not for applications, and changed
 * without notice.
 */
@NullMarked
package io.ductor.effect.internal;

import org.jspecify.annotations.NullMarked;
