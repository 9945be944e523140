/**
 * Ductor's implementation of {@code io.ductor.worker}: not for applications, and changed
 * without notice.
 */
@NullMarked
package io.ductor.worker.internal;

import org.jspecify.annotations.NullMarked;
