/**
 * Messaging: the headers Ductor's relays put on a message and the inbox on the consuming
 * side ({@link io.ductor.messaging.IdempotentListener}), shared by the broker modules
 * ({@code ductor-spring-boot-kafka}, {@code ductor-spring-boot-amqp}).
 */
@NullMarked
package io.ductor.messaging;

import org.jspecify.annotations.NullMarked;
