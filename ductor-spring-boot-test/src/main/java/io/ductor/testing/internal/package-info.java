/**
 * Ductor's implementation of {@code io.ductor.testing}: not for applications, and changed
 * without notice.
 */
@NullMarked
package io.ductor.testing.internal;

import org.jspecify.annotations.NullMarked;
