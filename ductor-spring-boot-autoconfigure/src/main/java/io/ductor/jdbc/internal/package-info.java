/**
 * Ductor's implementation of {@code io.ductor.jdbc}: not for applications, and changed
 * without notice.
 */
@NullMarked
package io.ductor.jdbc.internal;

import org.jspecify.annotations.NullMarked;
