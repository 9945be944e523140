/**
 * Auto-configuration of Ductor's RabbitMQ messaging and its properties
 * ({@code ductor.amqp.*}).
 */
@NullMarked
package io.ductor.amqp.autoconfigure;

import org.jspecify.annotations.NullMarked;
