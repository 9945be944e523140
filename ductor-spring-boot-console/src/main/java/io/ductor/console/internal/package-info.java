/**
 * Ductor's implementation of {@code io.ductor.console}: not for applications, and changed
 * without notice.
 */
@NullMarked
package io.ductor.console.internal;

import org.jspecify.annotations.NullMarked;
