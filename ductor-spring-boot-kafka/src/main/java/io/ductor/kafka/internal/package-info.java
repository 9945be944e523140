/**
 * How the Kafka relay works: the built-in effect that sends a recorded message, its
 * producer checks, the listener argument reader, metrics and health.
 */
@NullMarked
package io.ductor.kafka.internal;

import org.jspecify.annotations.NullMarked;
