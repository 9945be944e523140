/**
 * The reliability suite's Kafka crash: the consuming application.
 */
@NullMarked
package io.ductor.reliability.shipping;

import org.jspecify.annotations.NullMarked;
