/**
 * The reliability suite's RabbitMQ crash: the consuming application.
 */
@NullMarked
package io.ductor.reliability.depot;

import org.jspecify.annotations.NullMarked;
