/**
 * Ductor's implementation of {@code io.ductor.json}: not for applications, and changed
 * without notice.
 */
@NullMarked
package io.ductor.json.internal;

import org.jspecify.annotations.NullMarked;
