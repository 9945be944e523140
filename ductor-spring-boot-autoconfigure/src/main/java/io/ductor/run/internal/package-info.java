/**
 * Ductor's implementation of {@code io.ductor.run}: not for applications, and changed
 * without notice.
 */
@NullMarked
package io.ductor.run.internal;

import org.jspecify.annotations.NullMarked;
