/**
 * Ductor's implementation of {@code io.ductor.actuate}: not for applications, and changed
 * without notice.
 */
@NullMarked
package io.ductor.actuate.internal;

import org.jspecify.annotations.NullMarked;
