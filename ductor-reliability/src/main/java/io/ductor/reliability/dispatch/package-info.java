/**
 * The reliability suite's RabbitMQ crash: the producing application.
 */
@NullMarked
package io.ductor.reliability.dispatch;

import org.jspecify.annotations.NullMarked;
