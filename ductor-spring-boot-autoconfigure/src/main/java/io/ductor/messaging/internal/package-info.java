/**
 * How the inbox works: the interceptor of {@code @IdempotentListener} methods and the
 * reader of Spring Messaging arguments.
 */
@NullMarked
package io.ductor.messaging.internal;

import org.jspecify.annotations.NullMarked;
