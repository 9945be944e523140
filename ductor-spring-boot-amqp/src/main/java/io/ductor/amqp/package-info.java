/**
 * RabbitMQ through Ductor: {@link io.ductor.amqp.DurableRabbit} publishes a message in
 * the caller's transaction, as a durable effect intent relayed after the commit with
 * publisher confirms.
 */
@NullMarked
package io.ductor.amqp;

import org.jspecify.annotations.NullMarked;
