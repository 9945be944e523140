/**
 * Ductor's implementation of {@code io.ductor.amqp}: not for applications, and changed
 * without notice.
 */
@NullMarked
package io.ductor.amqp.internal;

import org.jspecify.annotations.NullMarked;
